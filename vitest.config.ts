import { defineConfig } from 'vitest/config';
import { printLog } from './test/missing-fixtures.reporter.js';

/**
 * `npm test`. Most files share their worker processes (isolate: false): loading the app and its libraries once per
 * process instead of once per file halves the suite's CPU. A file that changes what a process holds for good runs in
 * a process of its own (the `isolated` project); add a file to ISOLATED when it does:
 * - probes which modules the process loaded (lazy-load tests) or registers a module hook;
 * - starts Hardhat (one network and one configuration file per process: test/chain/evm.ts);
 * - needs a library object as it was before another file patched it (js-crypto's poseidon, before the fast one).
 */
const ISOLATED = [
  'test/**/lazy-load.test.ts',
  'test/chain/**/*.test.ts',
  'test/onchain.routes.test.ts',
  'test/trust/mtp-chain.test.ts',
  'test/trust/onchain-status.test.ts',
  'test/trust/poseidon.unit.test.ts',
  // Starts Hardhat for the deploy it shows.
  'test/console-zkp.browser.test.ts',
];
/**
 * The real-process tier, `npm run test:e2e` (CI runs it after `npm test`): files that start `node dist/server.js`
 * processes (startup, graceful stop, kill -9, full disks, two instances, the README walkthrough) or a browser. They
 * spend most of their time waiting for processes to start and stop, so they have a run of their own and `npm test`
 * stays within minutes.
 */
export const E2E = [
  'test/e2e.test.ts',
  'test/startup.test.ts',
  'test/shutdown.test.ts',
  'test/sqlite-open.test.ts',
  'test/storage-full.fs.test.ts',
  'test/storage-full.postgres.test.ts',
  'test/postgres.scaleout.test.ts',
  'test/redis.scaleout.test.ts',
  'test/webhooks.durability.test.ts',
  'test/revisions.durability.test.ts',
  'test/walkthrough.test.ts',
  'test/offchain-walkthrough.test.ts',
  'test/demo-onchain.test.ts',
  'test/docs.browser.test.ts',
];
const EXCLUDED = ['test/outage/**', 'node_modules/**', ...E2E];

// Generous: no test is about how fast it runs, and on a machine with ten times more work than cores a test that takes
// ten seconds when it is idle takes minutes. Only a hang waits this long.
export const timeouts = { testTimeout: 180_000, hookTimeout: 300_000 };
/** One line at the end counts the tests skipped for missing public test data (test/missing-fixtures.reporter.ts). */
export const missingFixtures = {
  reporters: ['default', './test/missing-fixtures.reporter.ts'],
  onConsoleLog: (log: string) => printLog(log),
};

export default defineConfig({
  test: {
    // Once per run, before any file (the projects below have none of their own).
    globalSetup: ['test/temp-root.global.ts', 'test/build.global.ts'],
    ...missingFixtures,
    // Two files at a time even on two cores: many wait on server processes, a browser or timers.
    maxWorkers: 2,
    projects: [
      { test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...EXCLUDED, ...ISOLATED], isolate: false, unstubEnvs: true, ...timeouts } },
      { test: { name: 'isolated', include: ISOLATED, exclude: EXCLUDED, ...timeouts } },
    ],
  },
});
