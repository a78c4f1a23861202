import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Positional: strings and numbers are cheap to copy to the thread. */
type Params = Array<string | number | null>;

export interface BatchWriter {
  write(rows: Params[], followUps?: Params[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * CommonJS via `eval`, so it runs alike from src/ and dist/. better-sqlite3 is synchronous: on the request thread
 * these inserts would block the event loop.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = ' + workerData.synchronous);
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
db.pragma('cache_size = -' + workerData.cacheKib);
// Statement journals (an insert that fires a trigger keeps one) in memory: SQLite's default spills them to temporary files.
db.pragma('temp_store = MEMORY');
if (workerData.checkpointMs) {
  // A passive checkpoint blocks no writer.
  const timer = setInterval(() => {
    try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
  }, workerData.checkpointMs);
  parentPort.on('message', (m) => {
    if (m.close) { clearInterval(timer); db.close(); parentPort.close(); }
  });
} else {
  // Its own checkpoints only past a large WAL, in case the checkpointer is gone.
  db.pragma('wal_autocheckpoint = ' + workerData.autocheckpointPages);
  if (workerData.maxPages !== undefined) db.pragma('max_page_count = ' + workerData.maxPages);
  // A failed COMMIT (a full disk) throws, and the batch is refused.
  const statement = db.prepare(workerData.sql);
  const followUp = workerData.followUpSql ? db.prepare(workerData.followUpSql) : undefined;
  const writeAll = db.transaction((rows, more) => {
    for (const row of rows) statement.run(row);
    if (more) for (const row of more) followUp.run(row);
  });
  parentPort.on('message', (m) => {
    if (m.close) { db.close(); parentPort.close(); return; }
    try {
      writeAll(m.rows, m.more);
      parentPort.postMessage({ id: m.id });
    } catch (err) {
      parentPort.postMessage({ id: m.id, error: { message: String(err && err.message), code: err && err.code } });
    }
  });
}
`;

const driver = createRequire(import.meta.url).resolve('better-sqlite3');

/** KiB (SQLite's default 2000 cost ~13 MB RSS under load): the writer only appends. */
const THREAD_CACHE_KIB = 512;

/** How long a statement waits for another connection's lock. */
export const BUSY_TIMEOUT_MS = 5000;

const CHECKPOINT_MS = 200;
/** ~40 MB: a checkpoint in the writer or request thread would stall it. */
export const BACKSTOP_CHECKPOINT_PAGES = 10_000;

/**
 * Batches commit in order on a writer thread, with a checkpointer thread. The thread starts on the first write and
 * after a failure (a batch in flight then fails as unavailable: it may have committed); idle, it holds no process.
 */
export function threadWriter(file: string, synchronous: string, sql: string, maxPages?: number, followUpSql?: string): BatchWriter {
  let worker: Worker | undefined;
  let checkpointer: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  const inFlight = new Set<Promise<void>>();

  const failAll = (err: Error) => {
    for (const waiter of waiting.values()) waiter.reject(err);
    waiting.clear();
  };
  const connection = { driver, file, synchronous, cacheKib: THREAD_CACHE_KIB, busyTimeoutMs: BUSY_TIMEOUT_MS };
  const start = (): Worker => {
    const thread = new Worker(PROGRAM, { eval: true, workerData: { ...connection, sql, followUpSql, maxPages, autocheckpointPages: BACKSTOP_CHECKPOINT_PAGES } });
    thread.unref();
    if (checkpointer === undefined) {
      const checkpointThread = new Worker(PROGRAM, { eval: true, workerData: { ...connection, checkpointMs: CHECKPOINT_MS } });
      checkpointThread.unref();
      // Lost, it starts again with the next writer; the writer's backstop bounds the WAL meanwhile.
      const lost = () => {
        if (checkpointer === checkpointThread) checkpointer = undefined;
      };
      checkpointThread.on('error', lost);
      checkpointThread.on('exit', lost);
      checkpointer = checkpointThread;
    }
    thread.on('message', (message: { id: number; error?: { message: string; code?: string } }) => {
      const waiter = waiting.get(message.id);
      if (!waiter) return;
      waiting.delete(message.id);
      if (waiting.size === 0) thread.unref();
      if (message.error) waiter.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
      else waiter.resolve();
    });
    const gone = (err: Error) => {
      if (worker === thread) worker = undefined;
      failAll(err);
    };
    thread.on('error', (err) => gone(Object.assign(err, { code: 'SCS_WRITER_GONE' })));
    thread.on('exit', (code) => gone(Object.assign(new Error(`the SQLite writer thread exited (code ${code})`), { code: 'SCS_WRITER_GONE' })));
    return thread;
  };

  return {
    write(rows, followUps) {
      const thread = (worker ??= start());
      const id = ++nextId;
      const done = new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        thread.ref();
        thread.postMessage({ id, rows, more: followUps?.length ? followUps : undefined });
      });
      inFlight.add(done);
      void done.catch(() => {}).finally(() => inFlight.delete(done));
      return done;
    },
    async close() {
      await Promise.allSettled([...inFlight]);
      const threads = [worker, checkpointer].filter((running): running is Worker => running !== undefined);
      worker = undefined;
      checkpointer = undefined;
      await Promise.all(threads.map((running) => {
        const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
        running.postMessage({ close: true });
        return exited;
      }));
    },
  };
}

/** The same on the request thread's own connection: for `:memory:` databases, which a second connection cannot open. */
export function inlineWriter(db: Database.Database, sql: string, followUpSql?: string): BatchWriter {
  const statement = db.prepare(sql);
  const followUp = followUpSql === undefined ? undefined : db.prepare(followUpSql);
  const writeAll = db.transaction((rows: Params[], more: Params[]) => {
    for (const row of rows) statement.run(row);
    if (more.length > 0 && followUp === undefined) throw new Error('this writer has no follow-up statement');
    for (const row of more) followUp?.run(row);
  });
  return {
    async write(rows, followUps = []) {
      writeAll(rows, followUps);
    },
    async close() {},
  };
}
