import { defineConfig } from 'vitest/config';

/**
 * The fast tier, `npm run test:unit`: every `*.unit.test.ts` file, the tests of pure modules, in seconds. Such a file
 * uses no database server, chain (hardhat), browser, worker threads, server processes, fuzzing or iden3 verifier
 * libraries (seconds to load), and no build (nothing here runs dist/). `npm test` runs these too, with the rest.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/temp-root.global.ts'],
    include: ['test/**/*.unit.test.ts'],
    // As in vitest.config.ts: a busy machine is slower, and no test is about how fast it runs.
    testTimeout: 180_000,
  },
});
