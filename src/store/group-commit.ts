/**
 * Group commit: callers add items and wait until the batch holding theirs is committed. At most one flush runs at a
 * time; what arrives meanwhile goes into the next one, so under load many callers share one transaction, and
 * nobody is answered before their item is durable.
 */
export class GroupCommit<T> {
  private queue: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  private flushing = false;
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(
    private readonly flush: (items: T[]) => Promise<void> | void,
    private readonly maxBatch = 256,
  ) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once every item added so far has been flushed (committed or failed). */
  drain(): Promise<void> {
    if (!this.flushing && !this.scheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // Let the requests of this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    const batch = this.queue.splice(0, this.maxBatch);
    try {
      await this.flush(batch.map((b) => b.item));
      for (const b of batch) b.resolve();
    } catch (err) {
      for (const b of batch) b.reject(err);
    } finally {
      this.flushing = false;
      if (this.queue.length > 0) this.schedule();
      else for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}
