/** The contract of the store handle, on both stores. */
import { describe, expect, it } from 'vitest';
import { sharedStore, storeBackends } from './contract.js';

describe.each(storeBackends('contract_handle'))('%s store: handle', (_name, open, available) => {
  const store = sharedStore(open, available);

  it.skipIf(!available)('answers ping while open', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });
});
