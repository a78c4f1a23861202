import { StorageFull, codeOf, storeError } from './errors.js';

const refusedByStorage = (err: unknown, mapped: unknown) =>
  mapped instanceof StorageFull || /^SQLITE_IOERR/.test(String(codeOf(err)));

/** A few free bytes do not make an instance ready. */
export const PROBE_BYTES = 64 * 1024;

export const PROBE_KEY = 'scs-storage-probe';

/** Cleared only by readiness's probe, not by a small write. */
export class StorageState {
  private refusing = false;

  constructor(private readonly probe: () => Promise<void> | void) {}

  async write<T>(call: () => Promise<T> | T): Promise<T> {
    try {
      return await call();
    } catch (err) {
      const mapped = storeError(err);
      if (refusedByStorage(err, mapped)) this.refusing = true;
      throw mapped;
    }
  }

  async check(): Promise<void> {
    if (!this.refusing) return;
    await this.write(this.probe);
    this.refusing = false;
  }
}
