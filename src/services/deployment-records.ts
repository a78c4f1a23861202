/**
 * The service's own deployment records: live in approval projects too, as a deployment's status is the service's
 * record of the chain, not a rule change for four eyes to review (docs/decisions.md, Deployment states).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { checkDeploymentTransitions, type SmartContractDeployment } from '../domain/deployments.js';
import type { PlanCache } from '../domain/plan-cache.js';
import { deploymentDelivery, webhookTarget, type WebhookConfig } from '../domain/webhooks.js';
import type { Scenario } from '../schemas/scenario.js';
import type { ScenarioRepository, ScenarioRow } from '../store/types.js';
import { reviseWith, type RevisionSource } from './revision-drafts.js';

const CHAIN_AUTHOR = 'service:chain';

/** As ScenarioService.patch: compare-and-set retried after a short random pause. */
const ATTEMPTS = 20;
const BACKOFF_MAX_MS = 5;

/** One incarnation of a scenario (`seq`): a deleted and recreated one is another. */
export interface RecordTarget {
  id: string;
  projectId: string | null;
  seq: number;
}

/** The scenario as it should be, given it as it is now (again on each retry); null: nothing to record. */
export type DeploymentEdit = (current: Scenario) => Scenario | null;

export interface DeploymentRecorderOptions {
  store: ScenarioRepository;
  plans: PlanCache;
  webhook?: WebhookConfig;
  now: () => number;
  author?: string;
}

export class DeploymentRecorder {
  private readonly source: RevisionSource;

  constructor(private readonly options: DeploymentRecorderOptions) {
    this.source = {
      author: options.author ?? CHAIN_AUTHOR,
      serialize: (row) => JSON.stringify({ id: row.id, input: row.input, createdAt: row.createdAt, updatedAt: row.updatedAt, revision: row.revision }),
    };
  }

  /**
   * Applies `edit` to the scenario `target` and records it as a revision, with a `deployment.updated` event for
   * deployment `deploymentId` (as stored after the edit) where the scenario's execution events go. Answers the new
   * row; null when the scenario is gone or `edit` declined. Throws when the edit breaks the deployment transitions
   * (src/domain/deployments.ts): the service never writes what a PATCH could not.
   */
  async record(target: RecordTarget, deploymentId: string, edit: DeploymentEdit): Promise<ScenarioRow | null> {
    const { store, plans, now } = this.options;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (attempt > 0) await sleep(Math.random() * Math.min(BACKOFF_MAX_MS, 2 ** attempt));
      const current = (await store.find(target.id, [target.projectId ?? ''])).find((r) => r.seq === target.seq);
      if (current === undefined) return null;
      const next = edit(structuredClone(current.input));
      if (next === null) return null;
      const problems = checkDeploymentTransitions(current.input.smartContractDeployments, next.smartContractDeployments);
      if (problems.length > 0) throw new Error(`deployment "${deploymentId}": ${problems.map((p) => `${p.pointer} ${p.message}`).join('; ')}`);
      const at = new Date(now()).toISOString();
      const revise = reviseWith(this.source, current);
      const row = await store.update(current.seq, next, current.revision, at, (written) => ({
        ...revise(written),
        deliveries: this.deliveries(written, deploymentId, at),
      }));
      if (row) {
        plans.forget(row.id, row.seq);
        return row;
      }
    }
    throw new Error(`scenario ${target.id} kept changing: deployment "${deploymentId}" was not recorded this time`);
  }

  private deliveries(row: ScenarioRow, deploymentId: string, at: string) {
    const url = webhookTarget(this.options.webhook, row.input.webhookUrl);
    const deployment = row.input.smartContractDeployments.find((d) => d.id === deploymentId) as SmartContractDeployment | undefined;
    if (url === undefined || deployment === undefined) return [];
    const scenario = { id: row.id, projectId: row.input.projectId ?? null, revision: row.revision };
    return [deploymentDelivery(scenario, deployment, row.input.webhookUrl ?? null, at)];
  }
}
