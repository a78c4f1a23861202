import { defineConfig } from 'vitest/config';

/**
 * The PostgreSQL outage test stops the local cluster: `npm run test:outage` runs it alone; CI (.ci/run) runs it after
 * `npm test`, which never includes it (vitest.config.ts excludes test/outage/).
 */
export default defineConfig({
  test: {
    globalSetup: ['test/temp-root.global.ts', 'test/build.global.ts'],
    include: ['test/outage/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
