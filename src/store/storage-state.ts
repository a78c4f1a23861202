import { StorageFull, codeOf, storeError } from './errors.js';

/** Full, or an I/O error (a failing disk, a file size limit). */
const refusedByStorage = (err: unknown, mapped: unknown) =>
  mapped instanceof StorageFull || /^SQLITE_IOERR/.test(String(codeOf(err)));

/** The readiness probe's write: room for a few ordinary writes, so a few free bytes do not make an instance ready. */
export const PROBE_BYTES = 64 * 1024;

/** Never a real key's (those are SHA-256 hex). */
export const PROBE_KEY = 'scs-storage-probe';

/**
 * Whether the storage takes writes. A write refused for space (or by an I/O error) marks it refusing; only a probe
 * write committed by readiness clears the mark, so a small write that still fits (a purge's DELETE) does not.
 */
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
