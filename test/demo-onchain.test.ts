/**
 * `npm run demo:onchain` (scripts/demo-onchain.mjs, docs/onchain-walkthrough.md) runs as a new user runs it: a local
 * Hardhat node, the real UniversalVerifier and credential validator, the service as a process, both answers printed.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

/** As a new user runs it: no JSON-LD documents of their own (the demo's type ships with the service). */
function runDemo(): Promise<{ code: number | null; out: string }> {
  const { JSONLD_DOCUMENTS_FILE: _none, ...env } = process.env;
  const proc = spawn(process.execPath, ['scripts/demo-onchain.mjs'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  return new Promise((resolve) => proc.on('close', (code) => resolve({ code, out })));
}

describe('npm run demo:onchain', () => {
  it('prints valid for the demo address and not-valid for another, and exits 0, with no JSON-LD documents given', async () => {
    const { code, out } = await runDemo();
    expect(code, out).toBe(0);
    const results = [...out.matchAll(/^RESULT (0x[0-9a-f]{40}) (\S+)$/gm)].map((m) => m[2]);
    expect(results, out).toEqual(['valid', 'not-valid']);
    expect(out).toContain('a stand-in that accepts every proof');
    // Deployed by the service's follower, as a user sees it: GET of the deployment's Location, no PATCH of its status.
    expect(out).toMatch(/^6\. Followed by the service \(GET \/compliance\/scenarios\/onchain-demo\/deployments\/deploy-[0-9a-f-]+\): transaction TxConfirmed in block \d+; deployment Deployed/m);
    expect(fs.readFileSync('scripts/demo-onchain.mjs', 'utf8')).not.toMatch(/'PATCH'/);
    // The walkthrough shows this run's request id (a type-1, 256-bit one), verifier and block.
    const requestId = /Request (\d{70,}) set on the verifier/.exec(out)?.[1];
    const verifier = /UniversalVerifier (0x[0-9a-f]{40})/.exec(out)?.[1];
    const page = fs.readFileSync('docs/onchain-walkthrough.md', 'utf8');
    expect(requestId, out).toBeDefined();
    expect(page).toContain(`5. Request ${requestId} set on the verifier`);
    expect(page).toContain(`"address": "${verifier}"`);
    expect(page).toContain(`"blockNumber": ${/"blockNumber": (\d+)/.exec(out)?.[1]}`);
  }, 240_000);
});
