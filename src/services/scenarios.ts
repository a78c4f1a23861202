import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkDeploymentTransitions, checkServiceFields, keepServiceFields } from '../domain/deployments.js';
import { KeyedQueue } from '../domain/keyed-queue.js';
import { mergePatch } from '../domain/merge-patch.js';
import type { PlanCache } from '../domain/plan-cache.js';
import type { FieldProblem } from '../engine/index.js';
import { validateScenarioRules } from '../execution/registry.js';
import type { FieldError } from '../schemas/problem.js';
import type { Static } from '@sinclair/typebox';
import type { Scenario, ScenarioPatch } from '../schemas/scenario.js';
import { ScenarioIdTaken } from '../store/errors.js';
import type { ScenarioApprovals, ScenarioRevision, ScenarioRow, ScenarioRepository } from '../store/types.js';
import type { Access } from './access.js';
import { reviseWith, type RevisionSource } from './revision-drafts.js';
import {
  Conflict, DeleteNeedsApproval, ForbiddenProject, InvalidScenario, ScenarioAmbiguous, ScenarioExists, ScenarioNotFound, preconditionFailed,
} from './errors.js';

export type { ScenarioRow } from '../store/types.js';

/** The Scenario schema's verdict on a document: the scenario, or its failing fields. */
export type SchemaCheck = (candidate: unknown) => { scenario: Scenario } | { errors: FieldError[]; truncated: boolean };

/** A PATCH's outcome: live at once, or a proposal awaiting approval (four eyes). */
export type Patched = { live: ScenarioRow } | { proposed: ScenarioRevision; input: Scenario };

export interface ScenarioServiceOptions {
  store: ScenarioRepository & ScenarioApprovals;
  /** Four eyes: its PATCHes are proposals. */
  approvalRequired: (projectId: string | null) => boolean;
  plans: PlanCache;
  /** For a merge patch's result (a create's body is checked by its route). */
  schema: SchemaCheck;
  validate: (scenario: Scenario) => Promise<FieldProblem[]>;
  now: () => number;
}

/**
 * A PATCH without If-Match merges again onto a concurrent writer's result, each try after a random pause below
 * 2^attempt ms (at most 5): writers elsewhere that retry in step would keep colliding. Worst case ~0.1 s.
 */
const PATCH_ATTEMPTS = 20;
const PATCH_BACKOFF_MAX_MS = 5;

export const etagOf = (row: Pick<ScenarioRow, 'seq' | 'revision'>) => `"${row.seq}.${row.revision}"`;

/** If-Match (RFC 9110 13.1.1): `*` or a list of strong entity tags; weak tags never match. */
function ifMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return true;
  const value = header.trim();
  if (value === '*') return true;
  return value.split(',').map((tag) => tag.trim()).some((tag) => tag === etag);
}

/** Another project's is not found (404), an id in two of them is a 409. `sees` guards against a store filter bug. */
export async function findScenarioIn(store: ScenarioRepository, access: Access, id: string): Promise<ScenarioRow> {
  const rows = await store.find(id, access.projects);
  const row = rows[0];
  if (row === undefined || !access.sees(row.input.projectId)) throw new ScenarioNotFound(id);
  if (rows.length > 1) throw new ScenarioAmbiguous(id, rows.map((r) => r.input.projectId ?? '(no project)').join(', '));
  return row;
}

type Candidate = { checked: Scenario } | { merged: unknown };

const holdsProject = (access: Access, field = 'input') => (s: Scenario) => {
  if (!access.sees(s.projectId)) {
    throw new ForbiddenProject(s.projectId == null
      ? `Only an operator token may create a scenario without a projectId; set ${field}.projectId to one of your projects`
      : `This token does not hold project ${s.projectId}`);
  }
};

export class ScenarioService {
  private readonly patches = new KeyedQueue();

  constructor(private readonly options: ScenarioServiceOptions) {}

  /** The schema, the caller's right to the project (`permit`), then the engine, the deployments and the type's checks. */
  private async validated(
    candidate: Candidate, permit: (scenario: Scenario) => void, before: Scenario['smartContractDeployments'] = [], field = 'input',
    writes = true,
  ): Promise<Scenario> {
    let scenario: Scenario;
    if ('checked' in candidate) {
      scenario = candidate.checked;
    } else {
      const verdict = this.options.schema(candidate.merged);
      if ('errors' in verdict) throw new InvalidScenario(verdict.errors, 'The scenario after the patch is not valid', verdict.truncated);
      scenario = verdict.scenario;
    }
    permit(scenario);
    const seen = new Set<string>();
    const problemsFound = [
      ...validateScenarioRules(scenario),
      ...checkDeploymentTransitions(before, scenario.smartContractDeployments),
      ...(writes ? checkServiceFields(before, scenario.smartContractDeployments) : []),
      ...(await this.options.validate(scenario)),
    ].filter((p) => !seen.has(p.pointer) && seen.add(p.pointer));
    const [first] = problemsFound;
    if (first !== undefined) {
      const what = `/${field}${first.pointer} ${first.message}`;
      throw new InvalidScenario(
        problemsFound.map((p) => ({ field: `body.${field}${p.pointer.replace(/\//g, '.')}`, pointer: `/${field}${p.pointer}`, message: p.message })),
        problemsFound.length === 1 ? `The scenario is not valid: ${what}` : `The scenario is not valid in ${problemsFound.length} places (see errors); the first: ${what}`,
      );
    }
    return scenario;
  }

  /** `ambiguous`: the caller holds another scenario with this id in another project. */
  async create(access: Access, id: string | undefined, input: Scenario, source: RevisionSource): Promise<{ row: ScenarioRow; ambiguous: boolean }> {
    const { store, plans, now } = this.options;
    await this.validated({ checked: input }, holdsProject(access));
    const newId = id ?? randomUUID();
    const row = await store.create(newId, input, new Date(now()).toISOString(), reviseWith(source));
    if (!row) throw new ScenarioExists(newId);
    plans.forget(newId, row.seq);
    return { row, ambiguous: (await store.heads(newId, access.projects)).length > 1 };
  }

  /** Checked as a create, named at `body.scenario`; a stored scenario's service-written fields may come along (the console sends them). */
  draft(access: Access, input: Scenario): Promise<Scenario> {
    return this.validated({ checked: input }, holdsProject(access, 'scenario'), [], 'scenario', false);
  }

  find(access: Access, id: string): Promise<ScenarioRow> {
    return findScenarioIn(this.options.store, access, id);
  }

  list(access: Access, limit: number, from?: number) {
    return this.options.store.list(limit, from, access.projects);
  }

  async delete(access: Access, id: string): Promise<void> {
    const row = await this.find(access, id);
    // A delete would free the id for a create that goes live unreviewed, the same rules under the same id.
    if (this.options.approvalRequired(row.input.projectId ?? null)) throw new DeleteNeedsApproval(id, row.input.projectId ?? '(none)');
    if (!(await this.options.store.delete(row.seq))) throw new ScenarioNotFound(id);
    this.options.plans.forget(id, row.seq);
  }

  /** PATCHes of one scenario here run one after the other; compare-and-set on the revision guards against writers elsewhere. */
  patch(access: Access, id: string, patch: Static<typeof ScenarioPatch>, ifMatch: string | undefined, source: RevisionSource): Promise<Patched> {
    const { store, plans, now, approvalRequired } = this.options;
    return this.patches.run(id, async () => {
      for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt++) {
        if (attempt > 0) await sleep(Math.random() * Math.min(PATCH_BACKOFF_MAX_MS, 2 ** attempt));
        const current = await this.find(access, id);
        const etag = etagOf(current);
        if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag)) throw preconditionFailed(ifMatch, etag);
        const merged = await this.validated({ merged: keepServiceFields(current.input.smartContractDeployments, mergePatch(current.input, patch)) }, ({ projectId: moved }) => {
          if (!access.sees(moved)) {
            throw new ForbiddenProject(moved == null
              ? 'Only an operator token may remove a scenario\'s projectId'
              : `This token does not hold project ${moved}: moving a scenario needs a token holding both projects`);
          }
        }, current.input.smartContractDeployments);
        const at = new Date(now()).toISOString();
        if (approvalRequired(current.input.projectId ?? null) || approvalRequired(merged.projectId ?? null)) {
          const proposed = await store.propose(current, merged, at, reviseWith(source, current));
          if (proposed) return { proposed, input: merged };
          continue;
        }
        let row;
        try {
          row = await store.update(current.seq, merged, current.revision, at, reviseWith(source, current));
        } catch (err) {
          if (!(err instanceof ScenarioIdTaken)) throw err;
          throw new Conflict(`Project ${merged.projectId ?? '(none)'} has a scenario with id ${id} already: the scenario cannot move there`);
        }
        if (row) {
          plans.forget(id, row.seq);
          return { live: row };
        }
        // Another writer won: a stale If-Match then fails above (412); without one, the patch merges onto theirs.
      }
      throw new Conflict('The scenario kept changing under concurrent writes; send the PATCH again');
    });
  }
}
