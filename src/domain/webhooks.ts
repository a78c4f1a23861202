import { createHmac, randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Store, WebhookDelivery } from '../store/types.js';

export interface WebhookConfig {
  url: string;
  secret: string;
  maxAttempts: number;
  retryBaseMs: number;
  timeoutMs: number;
  pollMs: number;
}

/**
 * HMAC-SHA256 of `<timestamp>.<body>` with the shared secret, hex: the receiver recomputes it from the
 * X-Webhook-Timestamp header and the raw body, compares in constant time, and refuses old timestamps.
 */
function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** A new delivery, to be written in the same transaction as the state change it announces. */
export function newDelivery(executionId: string, event: WebhookDelivery['event'], execution: unknown, now: string): WebhookDelivery {
  const id = randomUUID();
  return {
    id,
    executionId,
    event,
    payload: JSON.stringify({ id, event, createdAt: now, execution }),
    state: 'pending',
    attempts: 0,
    nextAttemptAt: now,
    lastStatus: null,
    lastError: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Delivers queued webhooks: polls the outbox, leases due deliveries (so instances do not send one twice), POSTs
 * each with its signature, and records every attempt. A non-2xx answer or a time-out is retried with exponential
 * backoff (retryBaseMs x 2^attempt, at most an hour) up to maxAttempts, then the delivery is marked failed.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly config: WebhookConfig,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
    /** The HTTP client (the composition root hands in the service's; tests may hand in their own). */
    private readonly fetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init),
  ) {}

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
    const timestamp = String(Math.floor(this.now() / 1000));
    let status: number | null = null;
    let error: string | null = null;
    try {
      const res = await this.fetch(this.config.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-webhook-id': d.id,
          'x-webhook-event': d.event,
          'x-webhook-timestamp': timestamp,
          'x-webhook-signature': signWebhook(this.config.secret, timestamp, d.payload),
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
    const attempts = d.attempts + 1;
    const delivered = error === null;
    const exhausted = !delivered && attempts >= this.config.maxAttempts;
    const delay = Math.min(this.config.retryBaseMs * 2 ** (attempts - 1), 3_600_000);
    const at = this.now();
    try {
      await this.store.updateWebhook({
        id: d.id,
        state: delivered ? 'delivered' : exhausted ? 'failed' : 'pending',
        attempts,
        nextAttemptAt: new Date(delivered || exhausted ? at : at + delay).toISOString(),
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
