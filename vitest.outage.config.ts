import { defineConfig } from 'vitest/config';

/** The PostgreSQL outage test stops the local cluster: it runs alone, after the main suite. */
export default defineConfig({
  test: {
    globalSetup: ['test/build.global.ts'],
    include: ['test/outage/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
