import { StorageFull } from '../store/errors.js';
import type { StoreHandle } from '../store/types.js';

/** `fullForSeconds`: its storage is full, ask again then. */
export type DatabaseState = { ready: true } | { ready: false; err: unknown; fullForSeconds?: number };

export async function databaseState(store: Pick<StoreHandle, 'ping'>): Promise<DatabaseState> {
  try {
    await store.ping();
    return { ready: true };
  } catch (err) {
    return { ready: false, err, ...(err instanceof StorageFull && { fullForSeconds: err.retryAfterSeconds }) };
  }
}
