import { VERDICT_BACKFILL_BATCH } from './migrations.js';

/**
 * Fills the verdict of executions recorded before migration 22, a batch at a time after the store opened: each batch
 * its own short transaction (no lock held on the table, the pool's statement_timeout never reached), the event loop
 * free between them. `batch` answers how many rows it filled; a short batch is the last. A failed batch stops the job
 * (`onError`): the next start goes on where it stopped.
 */
export class VerdictBackfill {
  private stopped = false;
  readonly done: Promise<void>;

  constructor(batch: () => Promise<number>, onError: (err: unknown) => void) {
    this.done = (async () => {
      try {
        while (!this.stopped && (await batch()) >= VERDICT_BACKFILL_BATCH) await new Promise((r) => setImmediate(r));
      } catch (err) {
        if (!this.stopped) onError(err);
      }
    })();
  }

  stop(): Promise<void> {
    this.stopped = true;
    return this.done;
  }
}
