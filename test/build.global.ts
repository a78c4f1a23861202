/**
 * Vitest global setup: compiles src/ to dist/ before any test file runs. The credential verification threads
 * (src/trust/pool.ts) run the compiled dist/trust/cold-worker.js even when the tests import src/, and the end-to-end
 * tests start dist/server.js; both must be what src/ says now. The build is incremental (its state in
 * dist/.tsbuildinfo, so deleting dist/ builds it whole again): with src/ unchanged since the last run it takes about a
 * second instead of fifteen.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

export default function setup(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', 'dist/.tsbuildinfo'], { stdio: 'inherit' });
  // The files that build again (e2e, scale-out) need not: dist/ is this run's.
  process.env.E2E_SKIP_BUILD = '1';
}
