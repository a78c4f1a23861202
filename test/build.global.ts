/**
 * Vitest global setup: compiles src/ to dist/ once before any test file runs. The credential verification threads
 * (src/trust/pool.ts) run the compiled dist/trust/cold-worker.js even when the tests import src/, and the end-to-end
 * tests start dist/server.js; both must be what src/ says now.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

export default function setup(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
  // The files that build again (e2e, scale-out) need not: dist/ is this run's.
  process.env.E2E_SKIP_BUILD = '1';
}
