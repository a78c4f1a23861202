import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { PrivateTargetRefused, guardedLookup, literalTargetRefusal, webhookTargetProblem, type Resolve } from './webhook-guard.js';
import type { ExecutionResult } from '../schemas/execution.js';
import { isRecord } from '../schemas/json.js';
import type { ExecutionRecord, Store, WebhookDelivery } from '../store/types.js';
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

/** The project's secret for a scenario's own `webhookUrl`; the service's for WEBHOOK_URL and project-less scenarios. */
function signingSecret(config: WebhookConfig, d: WebhookDelivery): string {
  if (d.url === null) return config.secret;
  const event: unknown = JSON.parse(d.payload);
  const projectId = isRecord(event) && isRecord(event.data) ? event.data.projectId : null;
  return typeof projectId === 'string' ? projectSecret(config.secret, projectId) : config.secret;
}

type Post = (url: URL, headers: Record<string, string>, body: string, timeoutMs: number, lookup?: LookupFunction) => Promise<number>;

class DeliveryTimeout extends Error {}

/** What is read of an answer's body (and then dropped): enough for any "ok", bounded for one that never ends. */
const ANSWER_BODY_MAX_BYTES = 64 * 1024;

/**
 * One deadline from the lookup to the end of the answer's body: a receiver that sends its headers and then stalls
 * gets no more time than one that never answers, and its socket is destroyed when the deadline passes (a socket is
 * never kept beyond `timeoutMs`). The body is read up to ANSWER_BODY_MAX_BYTES, then the socket is closed.
 */
const post: Post = (url, headers, body, timeoutMs, lookup) => new Promise((resolve, reject) => {
  const request = (url.protocol === 'https:' ? https : http).request(url, {
    method: 'POST',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    ...(lookup && { lookup }),
    // A fresh connection per delivery: a pooled socket would skip the lookup (and its check) of this one.
    agent: false,
  });
  let settled = false;
  const settle = (fn: () => void) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    fn();
  };
  const timer = setTimeout(() => {
    settle(() => reject(new DeliveryTimeout()));
    request.destroy();
  }, timeoutMs);
  request.on('response', (res) => {
    const status = res.statusCode ?? 0;
    let read = 0;
    const done = () => {
      settle(() => resolve(status));
      request.destroy();
    };
    res.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read >= ANSWER_BODY_MAX_BYTES) done();
    });
    res.on('end', done);
    res.on('error', (err) => settle(() => reject(err)));
  });
  request.on('error', (err) => settle(() => reject(err)));
  request.end(body);
});

/** Written in the same transaction as the record it announces. `url`: the scenario's own, or null for WEBHOOK_URL. */
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

function retryDelayMs(retryBaseMs: number, attempts: number): number {
  return Math.min(retryBaseMs * 2 ** (attempts - 1), 3_600_000);
}

/**
 * Delivers queued webhooks: leases due deliveries (so instances do not send one twice) and POSTs each signed;
 * `webhook-id` is the delivery id on every retry and replay, so receivers can drop duplicates. Failures retry with
 * exponential backoff up to maxAttempts, then the delivery is failed (a replay starts it again).
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly lookup: LookupFunction;

  constructor(
    private readonly store: Store,
    private readonly config: WebhookConfig,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
    resolve?: Resolve,
  ) {
    this.lookup = guardedLookup(resolve);
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
          }, d.payload, this.config.timeoutMs, guarded ? this.lookup : undefined);
          if (status < 200 || status > 299) error = `answered ${status}`;
        } catch (err) {
          if (err instanceof DeliveryTimeout) error = `no complete answer within ${this.config.timeoutMs} ms`;
          else error = err instanceof PrivateTargetRefused ? err.message : 'could not connect';
        }
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
