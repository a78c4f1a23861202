import { StorageFull, codeOf, storeError } from './errors.js';

/** Whether a write's error says the storage refuses writes: full, or an I/O error (a failing disk, a file size limit). */
const refusedByStorage = (err: unknown, mapped: unknown) =>
  mapped instanceof StorageFull || /^SQLITE_IOERR/.test(String(codeOf(err)));

/**
 * Bytes the readiness probe writes while the storage is full: room for a few ordinary writes (a scenario, a batch of
 * audit records), so that an instance is not called ready again on the strength of a few free bytes.
 */
export const PROBE_BYTES = 64 * 1024;

/** The key of the probe's row in idempotency_keys; never a real key's (those are SHA-256 hex digests). */
export const PROBE_KEY = 'scs-storage-probe';

/**
 * Whether the database's storage takes writes. Every write of a store runs through `write`, which turns driver errors
 * into the service's (StorageFull, StoreUnavailable); one refused for lack of space (or by an I/O error) marks the
 * storage refusing. Readiness calls `check`: while refusing, it commits a probe write of its own (PROBE_BYTES,
 * inserted, then deleted), and only that clears the mark. So an instance taken out of traffic learns when space is
 * freed, and a small write that still fits (a DELETE of the purge) does not call it ready again.
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

  /** Throws (StorageFull, StoreUnavailable) while the storage refuses writes, after probing it. */
  async check(): Promise<void> {
    if (!this.refusing) return;
    await this.write(this.probe);
    this.refusing = false;
  }
}
