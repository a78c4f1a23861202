/**
 * Callers wait until their item's batch commits. `maxInFlight` > 1 only where batches may commit in any order; a
 * failed batch is retried item by item, so one bad row fails only its caller.
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
    if (this.queue.length > 0) this.schedule();
    try {
      await this.flush(batch.map((b) => b.item));
      for (const b of batch) b.resolve();
    } catch (err) {
      const only = batch.length === 1 ? batch[0] : undefined;
      if (only !== undefined) only.reject(err);
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
