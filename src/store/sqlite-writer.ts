import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Positional: what crosses to the writer thread (strings and numbers, cheap to copy). */
type Params = Array<string | number | null>;

export interface BatchWriter {
  write(rows: Params[], followUps?: Params[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The writer thread's program (CommonJS via `eval`, so it runs alike from src/ and dist/): its own connection, one
 * transaction per message. better-sqlite3 is synchronous, so these inserts would otherwise block the request loop.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = ' + workerData.synchronous);
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
db.pragma('cache_size = -' + workerData.cacheKib);
if (workerData.checkpointMs) {
  // The checkpointer: copies the WAL into the database beside the writer (a passive checkpoint blocks no writer).
  const timer = setInterval(() => {
    try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
  }, workerData.checkpointMs);
  parentPort.on('message', (m) => {
    if (m.close) { clearInterval(timer); db.close(); parentPort.close(); }
  });
} else {
  // The writer: checkpoints are the checkpointer's; its own only past a large WAL, in case that one is gone.
  db.pragma('wal_autocheckpoint = ' + workerData.autocheckpointPages);
  if (workerData.maxPages !== undefined) db.pragma('max_page_count = ' + workerData.maxPages);
  // A transaction per message: its COMMIT throws when it fails (a full disk), and the batch is then refused.
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

/** KiB per connection (SQLite's default 2000): the writer only appends, and the default cost ~13 MB RSS under load. */
const THREAD_CACHE_KIB = 512;

/** How long a statement waits for another connection's lock. */
export const BUSY_TIMEOUT_MS = 5000;

const CHECKPOINT_MS = 200;
/** Others checkpoint only past this (~40 MB): a checkpoint in the writer or request thread would stall them. */
export const BACKSTOP_CHECKPOINT_PAGES = 10_000;

/**
 * A statement run in batches on a writer thread (WAL: the request thread keeps reading and sees each committed
 * batch), with a checkpointer thread. Batches commit in order; the thread starts on the first write and again after
 * a failure (a batch in flight then fails as unavailable: it may or may not be committed), and never holds the
 * process alive while idle.
 */
export function threadWriter(file: string, synchronous: string, sql: string, maxPages?: number, followUpSql?: string): BatchWriter {
  let worker: Worker | undefined;
  let checkpointer: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  const inFlight = new Set<Promise<void>>();

  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  const connection = { driver, file, synchronous, cacheKib: THREAD_CACHE_KIB, busyTimeoutMs: BUSY_TIMEOUT_MS };
  const start = (): Worker => {
    const w = new Worker(PROGRAM, { eval: true, workerData: { ...connection, sql, followUpSql, maxPages, autocheckpointPages: BACKSTOP_CHECKPOINT_PAGES } });
    w.unref();
    if (checkpointer === undefined) {
      const c = new Worker(PROGRAM, { eval: true, workerData: { ...connection, checkpointMs: CHECKPOINT_MS } });
      c.unref();
      // Without it the writer's backstop checkpoints still bound the WAL; it is started again with the next writer.
      const lost = () => {
        if (checkpointer === c) checkpointer = undefined;
      };
      c.on('error', lost);
      c.on('exit', lost);
      checkpointer = c;
    }
    w.on('message', (m: { id: number; error?: { message: string; code?: string } }) => {
      const entry = waiting.get(m.id);
      if (!entry) return;
      waiting.delete(m.id);
      if (waiting.size === 0) w.unref();
      if (m.error) entry.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else entry.resolve();
    });
    const gone = (err: Error) => {
      if (worker === w) worker = undefined;
      failAll(err);
    };
    w.on('error', (err) => gone(Object.assign(err, { code: 'SCS_WRITER_GONE' })));
    w.on('exit', (code) => gone(Object.assign(new Error(`the SQLite writer thread exited (code ${code})`), { code: 'SCS_WRITER_GONE' })));
    return w;
  };

  return {
    write(rows, followUps) {
      const w = (worker ??= start());
      const id = ++nextId;
      const done = new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        w.ref();
        w.postMessage({ id, rows, more: followUps?.length ? followUps : undefined });
      });
      inFlight.add(done);
      void done.catch(() => {}).finally(() => inFlight.delete(done));
      return done;
    },
    async close() {
      await Promise.allSettled([...inFlight]);
      const threads = [worker, checkpointer].filter((t): t is Worker => t !== undefined);
      worker = undefined;
      checkpointer = undefined;
      await Promise.all(threads.map((t) => {
        const exited = new Promise<void>((resolve) => t.once('exit', () => resolve()));
        t.postMessage({ close: true });
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
