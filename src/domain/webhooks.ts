import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { ExecutionResult } from '../schemas/execution.js';
import type { ExecutionRecord, Store, WebhookDelivery } from '../store/types.js';
import { verdictOf, type Verdict } from './verdict.js';

export interface WebhookConfig {
  /** Where events go when their scenario names no `webhookUrl`; unset: only scenarios that name one get webhooks. */
  url?: string;
  /** The Standard Webhooks secret (`whsec_` + base64) every delivery is signed with. */
  secret: string;
  maxAttempts: number;
  retryBaseMs: number;
  timeoutMs: number;
  pollMs: number;
}

/**
 * The body of an execution event (Standard Webhooks' `{type, timestamp, data}`): what a receiver needs to act on a
 * decision, never credential content. `disclosure` is the one exception, documented in docs/decisions.md: an
 * OffChainZKP `$sd` rule's value, which the holder disclosed to this receiver on purpose.
 */
interface ExecutionEvent {
  type: WebhookDelivery['event'];
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
    /** A signed attestation of the verdict (issue 30), when one was made for the execution; absent otherwise. */
    attestation?: Record<string, unknown>;
  };
}

/** Where an execution's event goes: its scenario's `webhookUrl`, else WEBHOOK_URL; undefined when neither is set. */
export function webhookTarget(config: WebhookConfig | undefined, scenarioUrl: string | null | undefined): string | undefined {
  if (config === undefined) return undefined;
  return scenarioUrl ?? config.url;
}

/** Create/patch-time check of a scenario's `webhookUrl`: it needs the service's signing secret, and a URL. */
export function webhookProblems(scenario: { webhookUrl?: string | null }, config: WebhookConfig | undefined): Array<{ pointer: string; message: string }> {
  const url = scenario.webhookUrl;
  if (url === undefined || url === null) return [];
  if (config === undefined) {
    return [{ pointer: '/webhookUrl', message: 'webhooks are not enabled on this service (its operator sets WEBHOOK_SECRET): remove webhookUrl or ask for them' }];
  }
  if (!URL.canParse(url)) return [{ pointer: '/webhookUrl', message: 'must be an http(s) URL' }];
  return [];
}

/**
 * A new delivery of an execution's end, to be written in the same transaction as the record it announces. `url` is
 * the scenario's own (kept with the delivery), or null for WEBHOOK_URL as configured when it is sent.
 */
export function executionDelivery(
  record: Pick<ExecutionRecord, 'executionId' | 'scenarioId' | 'scenarioRevision' | 'projectId' | 'address' | 'state' | 'createdAt' | 'updatedAt'>,
  results: readonly ExecutionResult[],
  url: string | null,
  extra: { attestation?: Record<string, unknown> } = {},
): WebhookDelivery {
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
    id: randomUUID(),
    executionId: record.executionId,
    event: type,
    url,
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

/** The delay before retry n (1-based): base × 2^(n−1), at most an hour. */
function retryDelayMs(retryBaseMs: number, attempts: number): number {
  return Math.min(retryBaseMs * 2 ** (attempts - 1), 3_600_000);
}

/**
 * Delivers queued webhooks: polls the outbox, leases due deliveries (so instances do not send one twice), POSTs
 * each signed as Standard Webhooks specify (`webhook-id` is the delivery id, the same on every retry and replay, so
 * receivers can drop duplicates), and records every attempt. A non-2xx answer or a time-out is retried with
 * exponential backoff (retryDelayMs) up to maxAttempts, then the delivery is marked failed (a replay starts it again).
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly signer: Webhook;

  constructor(
    private readonly store: Store,
    private readonly config: WebhookConfig,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
    /** The HTTP client (the composition root hands in the service's; tests may hand in their own). */
    private readonly fetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init),
  ) {
    this.signer = new Webhook(config.secret);
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => { this.running = undefined; });
    }, this.config.pollMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One round: deliver what is due. */
  async tick(): Promise<void> {
    const at = this.now();
    let due: WebhookDelivery[];
    try {
      due = await this.store.claimWebhooks(new Date(at).toISOString(), 20, new Date(at + this.config.timeoutMs * 2).toISOString());
    } catch (err) {
      this.log.warn({ err }, 'webhook outbox not readable now');
      return;
    }
    await Promise.all(due.map((d) => this.deliver(d)));
  }

  private async deliver(d: WebhookDelivery): Promise<void> {
    const url = d.url ?? this.config.url;
    let status: number | null = null;
    let error: string | null = null;
    if (url === undefined) {
      error = 'no WEBHOOK_URL is configured';
    } else {
      const sentAt = new Date(this.now());
      try {
        const res = await this.fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': d.id,
            'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
            'webhook-signature': this.signer.sign(d.id, sentAt, d.payload),
          },
          body: d.payload,
          signal: AbortSignal.timeout(this.config.timeoutMs),
          redirect: 'error',
        });
        status = res.status;
        await res.body?.cancel();
        if (!res.ok) error = `answered ${res.status}`;
      } catch (err) {
        error = err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${this.config.timeoutMs} ms` : 'could not connect';
      }
    }
    const attempts = d.attempts + 1;
    const delivered = error === null;
    const exhausted = !delivered && attempts >= this.config.maxAttempts;
    const at = this.now();
    try {
      await this.store.updateWebhook({
        id: d.id,
        state: delivered ? 'delivered' : exhausted ? 'failed' : 'pending',
        attempts,
        nextAttemptAt: new Date(delivered || exhausted ? at : at + retryDelayMs(this.config.retryBaseMs, attempts)).toISOString(),
        lastStatus: status,
        lastError: error,
        updatedAt: new Date(at).toISOString(),
      });
    } catch (err) {
      this.log.warn({ err, delivery: d.id }, 'could not record a webhook attempt; the lease will let it be retried');
    }
    if (!delivered) this.log.warn({ delivery: d.id, event: d.event, attempts, error }, exhausted ? 'webhook delivery failed for good' : 'webhook delivery failed; will retry');
  }
}
