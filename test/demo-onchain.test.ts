/**
 * `npm run demo:onchain` (scripts/demo-onchain.mjs, docs/onchain-walkthrough.md) runs as a new user runs it: a local
 * Hardhat node, the real UniversalVerifier and credential validator, the service as a process, both answers printed.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { haveIden3Documents, iden3DocumentsEnv } from './shared-fixtures.js';

function runDemo(): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, ['scripts/demo-onchain.mjs'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...iden3DocumentsEnv() } });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  return new Promise((resolve) => proc.on('close', (code) => resolve({ code, out })));
}

describe.skipIf(!haveIden3Documents())('npm run demo:onchain', () => {
  it('prints valid for the demo address and not-valid for another, and exits 0', async () => {
    const { code, out } = await runDemo();
    expect(code, out).toBe(0);
    const results = [...out.matchAll(/^RESULT (0x[0-9a-f]{40}) (\S+)$/gm)].map((m) => m[2]);
    expect(results, out).toEqual(['valid', 'not-valid']);
    expect(out).toMatch(/Request \d{70,} set on the verifier/); // a type-1 (256-bit) request id
    expect(out).toContain('a stand-in that accepts every proof');
  }, 240_000);
});
