import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/temp-root.global.ts', 'test/build.global.ts'],
    include: ['test/**/*.test.ts'],
    exclude: ['test/outage/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
