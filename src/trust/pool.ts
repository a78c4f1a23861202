/**
 * The cold verification pool: where credentials seen for the first time are checked (coldCheck: signature, issuer key,
 * merklization), bounded and shared fairly.
 *
 * - Off the request thread: `threads` worker threads (piscina), one per CPU by default, each at a lower scheduling
 *   priority (nice +10) than the request thread, so that a cold check never holds up a warm execute, /health/live or
 *   the rest of the service for more than the moment the operating system needs to switch. `threads: 0` runs the checks
 *   on the calling thread (library default: tests and the CPU benchmark of one credential).
 * - Bounded: at most `maxQueued` credentials wait or run at once in all, and at most `perTenant` for one tenant (a token
 *   or a JWT subject). A request is admitted whole or not at all (`reserve`): over its tenant's budget it gets
 *   ColdWorkRefused('tenant') (429 + Retry-After), over the service's queue ColdWorkRefused('service') (503 +
 *   Retry-After). A reservation is kept until the request's checks have all ended, follow-up rounds included.
 * - Fair: each tenant has its own FIFO, and the threads take tasks from the tenants in turn (round robin), so a tenant
 *   with a hundred credentials waiting delays another tenant's one credential by at most one task per thread.
 */
import os from 'node:os';
import { Piscina } from 'piscina';
import { compiledWorker, pinNiceAddon, webWorkerData } from '../worker-file.js';
import { ColdWorkRefused } from './errors.js';
import type { ColdResult, ColdTask } from './proof.js';
import warmupCredential from './documents/warmup-credential.json' with { type: 'json' };

export interface ColdPoolOptions {
  /** Worker threads; 0 runs every check on the calling thread. */
  threads: number;
  /** Credentials waiting or running at once, for all tenants together. */
  maxQueued: number;
  /** Credentials waiting or running at once for one tenant. */
  perTenant: number;
  /** The operator's JSON-LD documents (TrustOptions.documents), handed to each thread once. */
  documents?: Readonly<Record<string, unknown>>;
  /** The check itself when threads is 0 (the verifier hands in coldCheck with its loader). */
  inline: (task: ColdTask) => Promise<ColdResult>;
}

export interface Reservation {
  readonly tenant: string;
  /** Runs one check of this reservation's request (in its tenant's turn). */
  run(task: ColdTask): Promise<ColdResult>;
  /** Gives the reservation's slots back; idempotent. */
  release(): void;
}

/** The threads a pool gets by default: one per CPU this process may run on. */
export function defaultThreads(): number {
  return Math.max(1, Math.min(64, os.availableParallelism()));
}

/**
 * The thread pools of this process, shared by the verifiers with the same threads and documents (one in a server; many
 * in a test run, where each would otherwise start its own threads), counted by their users and destroyed with the last.
 */
const shared = new Map<string, { piscina: Piscina<ColdTask, ColdResult>; users: number }>();

function acquire(threads: number, documents: Readonly<Record<string, unknown>> | undefined): { key: string; piscina: Piscina<ColdTask, ColdResult> } {
  const key = `${threads}:${documents === undefined ? '' : JSON.stringify(documents)}`;
  let entry = shared.get(key);
  if (entry === undefined) {
    pinNiceAddon();
    entry = {
      piscina: new Piscina<ColdTask, ColdResult>({
        filename: compiledWorker(import.meta.url, 'trust/cold-worker.js'),
        minThreads: threads,
        maxThreads: threads,
        // Threads stay (loading the iden3 libraries costs ~1 s of CPU per thread); idle ones do not keep the process up.
        idleTimeout: Infinity,
        // Below the request thread: a cold check gives way to the requests the service is answering.
        niceIncrement: 10,
        workerData: { documents, ...webWorkerData('credential-verification') },
      }),
      users: 0,
    };
    shared.set(key, entry);
  }
  entry.users++;
  return { key, piscina: entry.piscina };
}

async function releaseShared(key: string): Promise<void> {
  const entry = shared.get(key);
  if (entry === undefined || --entry.users > 0) return;
  shared.delete(key);
  await entry.piscina.destroy();
}

let nextScope = 0;

interface Job {
  task: ColdTask;
  resolve(r: ColdResult): void;
  reject(e: unknown): void;
}

/** Mean seconds of one check, for Retry-After (a conservative figure: a genuine credential's full check). */
const SECONDS_PER_CHECK = 0.03;

export class ColdPool {
  private threads: { key: string; piscina: Piscina<ColdTask, ColdResult> } | undefined;
  /** Names this pool's remote documents in the threads it shares with other pools. */
  private readonly scope = `pool-${++nextScope}`;
  /** Slots reserved per tenant (waiting or running credentials of admitted requests). */
  private readonly reserved = new Map<string, number>();
  /** Tenants refused for their budget while their admitted checks still run: at their budget until those end. */
  private readonly spent = new Set<string>();
  private reservedTotal = 0;
  /** Waiting jobs per tenant, and the tenants with waiting jobs in turn order. */
  private readonly waiting = new Map<string, Job[]>();
  private readonly turns: string[] = [];
  private running = 0;
  private closed = false;
  private readonly concurrency: number;

  constructor(private readonly options: ColdPoolOptions) {
    this.concurrency = options.threads > 0 ? options.threads : 1;
  }

  /** How much is waiting or running, for readiness and metrics. */
  get load(): { reserved: number; running: number; capacity: number } {
    return { reserved: this.reservedTotal, running: this.running, capacity: this.options.maxQueued };
  }

  private retryAfter(queued: number): number {
    return Math.max(1, Math.ceil((queued * SECONDS_PER_CHECK) / this.concurrency));
  }

  /**
   * Whether `tenant` is at its budget, known before its request is read: every slot taken, or a request of it refused
   * for its budget while its admitted checks still run. Then the refusal its next request would meet (its warm
   * requests too, until its checks end), so that a flood of cold requests costs a refusal, not a read, parse and
   * digest of each body (~6 ms of the request thread for 100 credentials).
   */
  atBudget(tenant: string): ColdWorkRefused | undefined {
    const mine = this.reserved.get(tenant) ?? 0;
    if (mine < this.options.perTenant && !this.spent.has(tenant)) return undefined;
    return new ColdWorkRefused('tenant', this.retryAfter(mine),
      `This token has ${mine} credential(s) waiting for their first verification, its budget (at most ${this.options.perTenant} at once); ` +
        'retry once they are checked');
  }

  /** Admits `n` cold checks for `tenant`, or throws ColdWorkRefused. */
  reserve(tenant: string, n: number): Reservation {
    const mine = this.reserved.get(tenant) ?? 0;
    const retryAfter = (queued: number) => this.retryAfter(queued);
    if (mine + n > this.options.perTenant) {
      if (mine > 0) this.spent.add(tenant);
      throw new ColdWorkRefused(
        'tenant',
        retryAfter(mine),
        `This token has ${mine} credential(s) waiting for their first verification and may have at most ${this.options.perTenant} ` +
          `at once; this request would add ${n}`,
      );
    }
    if (this.reservedTotal + n > this.options.maxQueued) {
      throw new ColdWorkRefused('service', retryAfter(this.reservedTotal), 'The service is verifying as many new credentials as it queues; retry shortly');
    }
    this.reserved.set(tenant, mine + n);
    this.reservedTotal += n;
    let released = false;
    return {
      tenant,
      run: (task) => this.enqueue(tenant, task),
      release: () => {
        if (released) return;
        released = true;
        const left = (this.reserved.get(tenant) ?? n) - n;
        if (left > 0) this.reserved.set(tenant, left);
        else {
          this.reserved.delete(tenant);
          this.spent.delete(tenant);
        }
        this.reservedTotal -= n;
      },
    };
  }

  private enqueue(tenant: string, task: ColdTask): Promise<ColdResult> {
    if (this.closed) return Promise.reject(new Error('the cold verification pool is closed'));
    return new Promise<ColdResult>((resolve, reject) => {
      let queue = this.waiting.get(tenant);
      if (queue === undefined) {
        queue = [];
        this.waiting.set(tenant, queue);
        this.turns.push(tenant);
      }
      queue.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  /** Starts waiting jobs while threads are free, taking the tenants in turn. */
  private dispatch(): void {
    while (this.running < this.concurrency && this.turns.length > 0) {
      const tenant = this.turns.shift();
      const queue = tenant === undefined ? undefined : this.waiting.get(tenant);
      const job = queue?.shift();
      if (tenant === undefined || queue === undefined || job === undefined) continue; // a tenant in turn has a job waiting
      if (queue.length > 0) this.turns.push(tenant);
      else this.waiting.delete(tenant);
      this.running++;
      this.execute(job.task).then(job.resolve, job.reject).finally(() => {
        this.running--;
        this.dispatch();
      });
    }
  }

  /**
   * Starts the threads now, and has each check a bundled demo credential once (src/trust/documents/
   * warmup-credential.json, a public sample): the iden3 libraries load (~1 s of CPU a thread), the code gets compiled,
   * and the Poseidon hashes shared by every credential (the W3C and iden3 paths and types) are remembered, so that
   * the first credential a holder presents costs what the next ones do. Off the request thread; results ignored.
   */
  warm(): void {
    if (this.options.threads === 0 || this.closed) return;
    const piscina = this.threadsPool();
    for (let i = 0; i < this.options.threads; i++) {
      piscina.run({ credential: warmupCredential, scope: this.scope } satisfies ColdTask).catch(() => {});
    }
  }

  private execute(task: ColdTask): Promise<ColdResult> {
    if (this.options.threads === 0) return this.options.inline(task);
    return this.threadsPool().run({ ...task, scope: this.scope });
  }

  private threadsPool(): Piscina<ColdTask, ColdResult> {
    this.threads ??= acquire(this.options.threads, this.options.documents);
    return this.threads.piscina;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.waiting.values()) for (const job of queue) job.reject(new Error('the cold verification pool is closed'));
    this.waiting.clear();
    this.turns.length = 0;
    const t = this.threads;
    this.threads = undefined;
    if (t) await releaseShared(t.key);
  }
}
