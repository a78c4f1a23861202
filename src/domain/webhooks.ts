import { createHmac } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { timeOrderedId } from './ids.js';
import { Connections, DeliveryTimeout, post } from './webhook-post.js';
import { PrivateTargetRefused, guardedLookup, literalTargetRefusal, webhookTargetProblem, type Resolve } from './webhook-guard.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { SmartContractDeployment } from './deployments.js';
import { isRecord } from '../schemas/json.js';
import type { ClaimedWebhook, ExecutionDelivery, ExecutionRecord, WebhookDelivery, WebhookOutbox } from '../store/types.js';
import { DeliverySlots, targetKey, type Answer } from './webhook-slots.js';
import { verdictOf, type Verdict } from './verdict.js';

export interface WebhookConfig {
  url?: string;
  secret: string;
  allowPrivateTargets: boolean;
  maxAttempts: number;
  retryBaseMs: number;
  timeoutMs: number;
  pollMs: number;
}

/**
 * An execution event (Standard Webhooks' `{type, timestamp, data}`), never credential content except `disclosure`:
 * an OffChainZKP `$sd` value the holder disclosed to this receiver on purpose (docs/decisions.md).
 */
interface ExecutionEvent {
  type: ExecutionDelivery['event'];
  timestamp: string;
  data: {
    executionId: string;
    scenarioId: string;
    scenarioRevision: number;
    projectId: string | null;
    address: string;
    state: ExecutionRecord['state'];
    verdict: Verdict;
    rules: Array<{ id: string; status: ExecutionResult['result']['status']; disclosure?: ExecutionResult['result']['disclosure'] }>;
    createdAt: string;
    updatedAt: string;
    attestation?: Record<string, unknown>;
  };
}

export function webhookTarget(config: WebhookConfig | undefined, scenarioUrl: string | null | undefined): string | undefined {
  if (config === undefined) return undefined;
  return scenarioUrl ?? config.url;
}

export function webhookProblems(scenario: { webhookUrl?: string | null }, config: WebhookConfig | undefined): Array<{ pointer: string; message: string }> {
  const url = scenario.webhookUrl;
  if (url === undefined || url === null) return [];
  if (config === undefined) {
    return [{ pointer: '/webhookUrl', message: 'webhooks are not enabled on this service (its operator sets WEBHOOK_SECRET): remove webhookUrl or ask for them' }];
  }
  const problem = webhookTargetProblem(url, config.allowPrivateTargets);
  return problem === undefined ? [] : [{ pointer: '/webhookUrl', message: problem }];
}

/**
 * A project's signing secret, derived rather than stored: one tenant's receiver cannot forge another's events, and
 * rotating WEBHOOK_SECRET rotates every project's.
 */
export function projectSecret(serviceSecret: string, projectId: string): string {
  const key = Buffer.from(serviceSecret.slice('whsec_'.length), 'base64');
  return `whsec_${createHmac('sha256', key).update(`project:${projectId}`).digest('base64')}`;
}

/** The project's secret for a scenario's own `webhookUrl`, else the service's. */
function signingSecret(config: WebhookConfig, d: WebhookDelivery): string {
  if (d.url === null) return config.secret;
  const event: unknown = JSON.parse(d.payload);
  const projectId = isRecord(event) && isRecord(event.data) ? event.data.projectId : null;
  return typeof projectId === 'string' ? projectSecret(config.secret, projectId) : config.secret;
}

/** Written in the transaction of the record it announces; `url` null: WEBHOOK_URL. */
export function executionDelivery(
  record: Pick<ExecutionRecord, 'executionId' | 'scenarioId' | 'scenarioRevision' | 'projectId' | 'address' | 'state' | 'createdAt' | 'updatedAt'>,
  results: readonly ExecutionResult[],
  url: string | null,
  extra: { attestation?: Record<string, unknown> } = {},
): ExecutionDelivery {
  const type = record.state === 'failed' ? 'execution.failed' : 'execution.completed';
  const event: ExecutionEvent = {
    type,
    timestamp: record.updatedAt,
    data: {
      executionId: record.executionId,
      scenarioId: record.scenarioId,
      scenarioRevision: record.scenarioRevision,
      projectId: record.projectId,
      address: record.address,
      state: record.state,
      verdict: verdictOf(results.map((r) => r.result)),
      rules: results.map((r) => ({ id: r.objectId, status: r.result.status, ...(r.result.disclosure && { disclosure: r.result.disclosure }) })),
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      ...(extra.attestation && { attestation: extra.attestation }),
    },
  };
  return {
    id: timeOrderedId(),
    executionId: record.executionId,
    event: type,
    // Normalised (WHATWG href): claims group targets by origin (targetKey).
    url: url !== null && URL.canParse(url) ? new URL(url).href : url,
    payload: JSON.stringify(event),
    state: 'pending',
    attempts: 0,
    nextAttemptAt: record.updatedAt,
    lastStatus: null,
    lastError: null,
    createdAt: record.updatedAt,
    updatedAt: record.updatedAt,
  };
}

/** A deployment's change: Standard Webhooks' shape as execution events; the deployment as stored (it holds no key). */
export function deploymentDelivery(
  scenario: { id: string; projectId: string | null; revision: number }, deployment: SmartContractDeployment, url: string | null, at: string,
): WebhookDelivery {
  const event = {
    type: 'deployment.updated',
    timestamp: at,
    data: { scenarioId: scenario.id, projectId: scenario.projectId, revision: scenario.revision, deployment },
  };
  return {
    id: timeOrderedId(), executionId: null, event: 'deployment.updated', url: url !== null && URL.canParse(url) ? new URL(url).href : url,
    payload: JSON.stringify(event), state: 'pending', attempts: 0, nextAttemptAt: at, lastStatus: null, lastError: null, createdAt: at, updatedAt: at,
  };
}

/** A 2xx within this share of WEBHOOK_TIMEOUT_MS is a fast answer: it widens its target's window (DeliverySlots). */
const FAST_SHARE = 0.1;

/** Between a POST's deadline and its lease's end: for instances' clock skew and for recording the attempt. */
const LEASE_MARGIN_MS = 1000;

function retryDelayMs(retryBaseMs: number, attempts: number): number {
  return Math.min(retryBaseMs * 2 ** (attempts - 1), 3_600_000);
}

/**
 * Leases due deliveries (so instances do not send one twice) and POSTs each signed; `webhook-id` is the delivery id on
 * every retry, so receivers can drop duplicates. A poll never waits for its deliveries: each runs within the slots of
 * its target and project (DeliverySlots).
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private stopped = false;
  /** The last claim found some, or deliveries were in flight: a delivery that ends claims again. */
  private backlog = false;
  private readonly sending = new Set<Promise<void>>();
  private readonly slots: DeliverySlots;
  private readonly connections: Connections;

  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly config: WebhookConfig,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
    resolve?: Resolve,
  ) {
    this.connections = new Connections(guardedLookup(resolve));
    this.slots = new DeliverySlots(config.retryBaseMs);
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.poll(), this.config.pollMs).unref();
  }

  /** Finishes the claim and the deliveries under way (each ends within WEBHOOK_TIMEOUT_MS). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.claiming;
    await Promise.all(this.sending);
    this.connections.close();
  }

  /** Claims now, or once more after the claim under way. */
  private poll(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claim().finally(() => {
      this.claiming = undefined;
      if (this.claimAgain) {
        this.claimAgain = false;
        this.poll();
      }
    });
  }

  private async claim(): Promise<void> {
    const free = this.slots.free();
    if (free <= 0) return;
    const at = this.now();
    const leaseUntil = new Date(at + this.config.timeoutMs * 2 + LEASE_MARGIN_MS).toISOString();
    let due: ClaimedWebhook[];
    try {
      due = await this.outbox.claimWebhooks(new Date(at).toISOString(), free, leaseUntil, this.slots.fairness(at));
    } catch (err) {
      this.log.warn({ err }, 'webhook outbox not readable now');
      return;
    }
    // A claim that found none while deliveries were in flight may have been held back by their targets' or projects'
    // full windows (skipped, or no room left): their end makes room, so it claims again then, not a poll later.
    this.backlog = due.length > 0 || this.slots.busy();
    const unsent: string[] = [];
    const share = this.slots.share(due.map((d) => d.projectId ?? ''));
    for (const d of due) {
      const target = targetKey(d.url);
      const project = d.projectId ?? '';
      // A POST must end before its lease (taken before the claim), or another claim sends it again: too little left, given back.
      const budget = Date.parse(leaseUntil) - LEASE_MARGIN_MS - this.now();
      if (budget < this.config.timeoutMs / 2 || !this.slots.take(target, project, share, at)) {
        unsent.push(d.id);
        continue;
      }
      const sending: Promise<void> = this.deliver(d, leaseUntil, Math.min(this.config.timeoutMs, budget))
        .catch((err: unknown) => {
          this.log.warn({ err, delivery: d.id }, 'webhook delivery broke off; the lease will let it be retried');
          return 'none' as const;
        })
        .then((answer) => this.slots.done(target, project, answer, this.now()))
        .finally(() => {
          this.sending.delete(sending);
          if (this.backlog) this.poll();
        });
      this.sending.add(sending);
    }
    if (unsent.length > 0) {
      await this.outbox.releaseWebhooks(unsent, leaseUntil).catch((err: unknown) => {
        this.log.warn({ err }, 'could not give back unsent webhook deliveries; their lease will run out');
      });
    }
  }

  /** Records the attempt; how the receiver answered, for its target's window (DeliverySlots). */
  private async deliver(d: WebhookDelivery, leaseUntil: string, timeoutMs: number): Promise<Answer> {
    const url = d.url ?? this.config.url;
    let status: number | null = null;
    let error: string | null = null;
    let answer: Answer = 'answered';
    if (url === undefined) {
      error = 'no WEBHOOK_URL is configured';
    } else {
      // A scenario's target is the tenant's choice, checked again at send time; WEBHOOK_URL is the operator's own.
      const guarded = d.url !== null && !this.config.allowPrivateTargets;
      const target = new URL(url);
      error = guarded ? literalTargetRefusal(target) ?? null : null;
      if (error === null) {
        const sentAt = new Date(this.now());
        try {
          status = await post(target, {
            'content-type': 'application/json',
            'webhook-id': d.id,
            'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
            'webhook-signature': new Webhook(signingSecret(this.config, d)).sign(d.id, sentAt, d.payload),
          }, d.payload, timeoutMs, this.connections.route(target, guarded));
          if (status < 200 || status > 299) error = `answered ${status}`;
          else if (this.now() - sentAt.getTime() <= this.config.timeoutMs * FAST_SHARE) answer = 'fast';
        } catch (err) {
          if (!(err instanceof PrivateTargetRefused)) answer = 'none';
          if (err instanceof DeliveryTimeout) error = `no complete answer within ${Math.round(timeoutMs)} ms`;
          else error = err instanceof PrivateTargetRefused ? err.message : 'could not connect';
        }
      }
    }
    const attempts = d.attempts + 1;
    const delivered = error === null;
    const exhausted = !delivered && attempts >= this.config.maxAttempts;
    const at = this.now();
    try {
      await this.outbox.updateWebhook({
        id: d.id,
        state: delivered ? 'delivered' : exhausted ? 'failed' : 'pending',
        attempts,
        nextAttemptAt: new Date(delivered || exhausted ? at : at + retryDelayMs(this.config.retryBaseMs, attempts)).toISOString(),
        lastStatus: status,
        lastError: error,
        updatedAt: new Date(at).toISOString(),
      }, leaseUntil);
    } catch (err) {
      this.log.warn({ err, delivery: d.id }, 'could not record a webhook attempt; the lease will let it be retried');
    }
    if (!delivered) this.log.warn({ delivery: d.id, event: d.event, attempts, error }, exhausted ? 'webhook delivery failed for good' : 'webhook delivery failed; will retry');
    return answer;
  }
}
