/**
 * Without the public test data, a run says so once, at its end, with the count of tests skipped for it (not once per
 * file): test/missing-fixtures.reporter.ts, in a vitest run of two files that need the data, in a process of its own.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { MISSING_FIXTURES } from './shared-fixtures.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');

it('ends with one line counting the tests skipped for missing data, and prints no line per file', async () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
  const { stdout, stderr } = await run(process.execPath, [
    path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--color=false',
    'test/domain/credential-types.test.ts', 'test/trust/mtp-realworld.test.ts',
  ], { cwd: ROOT, env: { ...env, SCS_SHARED_FIXTURES: path.join(ROOT, 'no-such-folder') }, maxBuffer: 1 << 24 });
  const output = stdout + stderr;
  const lines = output.split('\n').filter((l) => l.includes('for missing public test data'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^\d+ tests skipped in 2 files for missing public test data \(iden3\/, realworld\/\): run `npm run fixtures`/);
  expect(Number(/^(\d+)/.exec(lines[0]!)![1])).toBeGreaterThanOrEqual(3);
  expect(output).not.toContain(MISSING_FIXTURES);
  expect(output.trimEnd().split('\n').at(-1)).toBe(lines[0]);
});
