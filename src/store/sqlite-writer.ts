import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** One statement's parameters, positional: what crosses to the writer thread (strings and numbers, cheap to copy). */
type Params = Array<string | number | null>;

export interface BatchWriter {
  /**
   * Runs the statement once per row, then the follow-up statement once per `followUps` row, in one transaction;
   * resolves once it is committed.
   */
  write(rows: Params[], followUps?: Params[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The writer thread's program (CommonJS, run with `eval`, so that it works the same from `src/` under the test
 * runner and from `dist/`): its own connection to the database file, one prepared statement (and an optional
 * follow-up: the outbox rows of the same records), one transaction per message. better-sqlite3 is synchronous, so these inserts would otherwise run on the event loop of the requests.
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

/**
 * Page cache of the writer's and the checkpointer's connections, KiB (SQLite's default is 2000 per connection). The
 * writer appends: it needs the right edge of the table and its indexes, a few pages; the checkpointer copies WAL frames
 * without the cache. With the default, the two caches and the allocator's slack held ~13 MB more RSS under load.
 */
const THREAD_CACHE_KIB = 512;

/** How long a statement of any connection to the file waits for another connection's lock (other threads, processes). */
export const BUSY_TIMEOUT_MS = 5000;

/** How often the checkpointer thread copies the WAL into the database. */
const CHECKPOINT_MS = 200;
/**
 * Connections other than the checkpointer checkpoint only past this many WAL pages (~40 MB; SQLite's default is
 * 1000): a checkpoint in the writer would hold up every commit behind it, one on the request thread its event loop.
 */
export const BACKSTOP_CHECKPOINT_PAGES = 10_000;

/**
 * A statement run in batches on a writer thread with its own connection (WAL: the request thread's connection keeps
 * reading meanwhile and sees each batch once it is committed), and a checkpointer thread beside it. Batches are committed one after the other, in the
 * order they were written; the thread is started on the first write and again after it failed (a batch in flight
 * then fails as unavailable: it may or may not have been committed), and does not keep the process alive while idle.
 * `maxPages`: PRAGMA max_page_count of the writer's connection (see SqliteOptions.maxPages); `followUpSql`: the
 * statement of `write`'s followUps.
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
