import type { IdempotencyRepository } from '../store/types.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** A claim whose process died is free within this. */
export const IDEMPOTENCY_LEASE_MS = 30_000;

type StoredResponse = Parameters<IdempotencyRepository['completeIdempotencyKey']>[1];

const iso = (ms: number) => new Date(ms).toISOString();

export class IdempotencyKeys {
  constructor(private readonly keys: IdempotencyRepository, private readonly now: () => number) {}

  claim(key: string, requestHash: string) {
    const at = this.now();
    return this.keys.claimIdempotencyKey(key, requestHash, iso(at), iso(at - IDEMPOTENCY_TTL_MS), iso(at + IDEMPOTENCY_LEASE_MS));
  }

  renew(key: string): Promise<void> {
    return this.keys.renewIdempotencyLease(key, iso(this.now() + IDEMPOTENCY_LEASE_MS));
  }

  complete(key: string, response: StoredResponse): Promise<void> {
    return this.keys.completeIdempotencyKey(key, response);
  }

  release(key: string): Promise<void> {
    return this.keys.releaseIdempotencyKey(key);
  }
}
