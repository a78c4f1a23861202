/**
 * Worker threads at nice +10, so a cold check never holds up the request thread. Tenants take turns at the threads,
 * so a tenant with a hundred credentials waiting delays another's one credential by one task per thread.
 */
import os from 'node:os';
import { Piscina } from 'piscina';
import { compiledWorker, pinNiceAddon, webWorkerData } from '../worker-file.js';
import { ColdWorkRefused } from './errors.js';
import type { ColdResult, ColdTask } from './proof.js';
import warmupCredential from './documents/warmup-credential.json' with { type: 'json' };

export interface ColdPoolOptions {
  /** 0 runs every check on the calling thread. */
  threads: number;
  maxQueued: number;
  perTenant: number;
  documents?: Readonly<Record<string, unknown>>;
  inline: (task: ColdTask) => Promise<ColdResult>;
}

export interface Reservation {
  readonly tenant: string;
  run(task: ColdTask): Promise<ColdResult>;
  /** Idempotent. */
  release(): void;
}

export function defaultThreads(): number {
  return Math.max(1, Math.min(64, os.availableParallelism()));
}

/** Shared by the verifiers with the same threads and documents; destroyed with the last user. */
const shared = new Map<string, { piscina: Piscina<ColdTask, ColdResult>; users: number }>();

function acquire(threads: number, documents: Readonly<Record<string, unknown>> | undefined): { key: string; piscina: Piscina<ColdTask, ColdResult> } {
  const key = `${threads}:${documents === undefined ? '' : JSON.stringify(documents)}`;
  let entry = shared.get(key);
  if (entry === undefined) {
    pinNiceAddon();
    const worker = compiledWorker(import.meta.url, 'trust/cold-worker.js');
    entry = {
      piscina: new Piscina<ColdTask, ColdResult>({
        filename: worker.filename,
        minThreads: threads,
        maxThreads: threads,
        // Threads stay: loading the iden3 libraries costs about a second of CPU each.
        idleTimeout: Infinity,
        niceIncrement: 10,
        workerData: { documents, entry: worker.entry, ...webWorkerData('credential-verification') },
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

const SECONDS_PER_CHECK = 0.03;

export class ColdPool {
  private threads: { key: string; piscina: Piscina<ColdTask, ColdResult> } | undefined;
  private readonly scope = `pool-${++nextScope}`;
  private readonly reserved = new Map<string, number>();
  /** Tenants refused for their budget while their checks run: at their budget until those end. */
  private readonly spent = new Set<string>();
  private reservedTotal = 0;
  private readonly waiting = new Map<string, Job[]>();
  private readonly turns: string[] = [];
  private running = 0;
  private closed = false;
  private readonly concurrency: number;

  constructor(private readonly options: ColdPoolOptions) {
    this.concurrency = options.threads > 0 ? options.threads : 1;
  }

  get load(): { reserved: number; running: number; capacity: number } {
    return { reserved: this.reservedTotal, running: this.running, capacity: this.options.maxQueued };
  }

  private retryAfter(queued: number): number {
    return Math.max(1, Math.ceil((queued * SECONDS_PER_CHECK) / this.concurrency));
  }

  /** Before the body is read: a flood of cold requests costs a refusal each, not a read and digest. */
  atBudget(tenant: string): ColdWorkRefused | undefined {
    const mine = this.reserved.get(tenant) ?? 0;
    if (mine < this.options.perTenant && !this.spent.has(tenant)) return undefined;
    return new ColdWorkRefused('tenant', this.retryAfter(mine),
      `This token has ${mine} credential(s) waiting for their first verification, its budget (at most ${this.options.perTenant} at once); ` +
        'retry once they are checked');
  }

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

  /** Each thread checks a sample credential, so the first holder's does not pay for loading the libraries. */
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
