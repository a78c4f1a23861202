import { defineConfig } from 'vitest/config';
import { E2E, missingFixtures, timeouts } from './vitest.config.js';

/** `npm run test:e2e`: the real-process tier (see E2E in vitest.config.ts), each file in a process of its own. */
export default defineConfig({
  test: {
    globalSetup: ['test/temp-root.global.ts', 'test/build.global.ts'],
    include: E2E,
    ...missingFixtures,
    maxWorkers: 2,
    ...timeouts,
  },
});
