/**
 * Group commit: callers add items and wait until the batch holding theirs is committed. At most `maxInFlight`
 * flushes run at a time (one by default); what arrives meanwhile goes into the next one, so under load many callers
 * share one transaction, and nobody is answered before their item is durable. More than one flush may be in flight
 * where that is safe: a writer thread's queue, which commits in order, or independent INSERTs on pooled connections
 * (PostgreSQL), whose batches may then commit in either order. A batch then need not wait for the acknowledgement of
 * the one before it to be sent.
 *
 * `flush` must commit all of its items or none. When it fails for a batch of several, each item is flushed again on
 * its own: one bad item (a row the database refuses) fails its own caller, not the batch.
 */
export class GroupCommit<T> {
  private queue: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  private inFlight = 0;
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(
    private readonly flush: (items: T[]) => Promise<void> | void,
    private readonly maxBatch = 256,
    private readonly maxInFlight = 1,
  ) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once every item added so far has been flushed (committed or failed). */
  drain(): Promise<void> {
    if (this.inFlight === 0 && !this.scheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.inFlight >= this.maxInFlight || this.scheduled) return;
    this.scheduled = true;
    // Let the requests of this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.inFlight += 1;
    const batch = this.queue.splice(0, this.maxBatch);
    // More waiting than one batch holds: the next batch need not wait for this one when more may be in flight.
    if (this.queue.length > 0) this.schedule();
    try {
      await this.flush(batch.map((b) => b.item));
      for (const b of batch) b.resolve();
    } catch (err) {
      const only = batch.length === 1 ? batch[0] : undefined;
      if (only !== undefined) only.reject(err);
      // The batch committed nothing (one transaction, or one multi-row INSERT): each item again on its own, so that
      // one item the database refuses fails its own caller only, never the others who happened to share its batch.
      else {
        for (const b of batch) {
          try {
            await this.flush([b.item]);
            b.resolve();
          } catch (alone) {
            b.reject(alone);
          }
        }
      }
    } finally {
      this.inFlight -= 1;
      if (this.queue.length > 0) this.schedule();
      else if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}
