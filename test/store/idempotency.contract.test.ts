/** The contract of the idempotency repository, on both stores. */
import { describe, expect, it } from 'vitest';
import { sharedStore, storeBackends } from './contract.js';

describe.each(storeBackends('contract_idempotency'))('%s store: idempotency', (_name, open, available) => {
  const store = sharedStore(open, available);

  it.skipIf(!available)('leases idempotency claims: held while renewed, free once the lease runs out, never once completed', async () => {
    const at = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();
    const old = '2029-12-01T00:00:00.000Z';
    const key = `lease-${Math.random().toString(36).slice(2)}`;
    expect(await store.claimIdempotencyKey(key, 'h', at(0), old, at(30))).toEqual({ claimed: true });
    await store.renewIdempotencyLease(key, at(50));
    expect(await store.claimIdempotencyKey(key, 'h', at(40), old, at(70))).toEqual({ claimed: false, requestHash: 'h' });
    // Its owner stopped renewing at 50 s: the key is free for the next request.
    expect(await store.claimIdempotencyKey(key, 'h2', at(51), old, at(81))).toEqual({ claimed: true });
    await store.completeIdempotencyKey(key, { status: 200, headers: {}, body: '[]' });
    await store.renewIdempotencyLease(key, at(500));
    const done = await store.claimIdempotencyKey(key, 'h2', at(200), old, at(230));
    expect(done).toMatchObject({ claimed: false, response: { status: 200, body: '[]' } });
  });
});
