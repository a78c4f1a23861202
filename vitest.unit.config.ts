import { defineConfig } from 'vitest/config';

/**
 * The fast tier, `npm run test:unit`: the tests of pure modules, in seconds. No database server, chain (hardhat),
 * browser, worker threads, server processes, fuzzing or iden3 verifier libraries (seconds to load), and no build
 * (nothing here runs dist/). `npm test` runs these too, with the rest. A new test file that keeps to that belongs in
 * this list.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/temp-root.global.ts'],
    include: [
      'test/address*.test.ts', 'test/canonical-json.test.ts', 'test/deployments.test.ts', 'test/exact-numbers.test.ts',
      'test/group-commit.test.ts', 'test/keyed-queue.test.ts', 'test/plan-cache.test.ts',
      'test/config.test.ts', 'test/config.docs.test.ts',
      'test/engine/*.test.ts', 'test/chain/config.test.ts', 'test/chain/outcomes.test.ts',
      'test/trust/poseidon.test.ts', 'test/trust/units.test.ts',
    ],
  },
});
