/**
 * `npm run demo:offchain` (src/scripts/demo-offchain.ts), as the walkthrough runs it: the service starts, the
 * OffChainZKP scenario is created and executed, and the authorization request is printed as JSON, as an iden3comm
 * deep link whose i_m decodes to that very request, and as a terminal QR code.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';
import { haveIden3Documents, iden3DocumentsEnv } from './shared-fixtures.js';

const demo = (args: string[], env: NodeJS.ProcessEnv) => {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  return spawnSync(process.execPath, [path.resolve('dist/scripts/demo-offchain.js'), '--once', '--port', String(port),
    '--public-base-url', 'https://compliance.example', ...args], { encoding: 'utf8', timeout: 90_000, env });
};
/** As a new user runs it: no JSON-LD documents of their own. */
const { JSONLD_DOCUMENTS_FILE: _none, ...newUser } = process.env;

it('prints the authorization request as JSON, deep link and QR code, with the callback under PUBLIC_BASE_URL, with no JSON-LD documents given', () => {
  const run = demo([], newUser);
  expect(run.status, run.stderr).toBe(0);
  const link = /iden3comm:\/\/\?i_m=(\S+)/.exec(run.stdout)?.[1];
  expect(link).toBeDefined();
  const request = JSON.parse(Buffer.from(decodeURIComponent(link!), 'base64').toString('utf8'));
  expect(run.stdout).toContain(JSON.stringify(request, null, 2));
  expect(request.body.callbackUrl).toMatch(/^https:\/\/compliance\.example\/compliance\/executions\/[0-9a-f-]{36}\/zkp-response$/);
  expect(request.body.scope).toEqual([expect.objectContaining({
    id: 1, circuitId: 'credentialAtomicQueryV3', params: { nullifierSessionId: '20260101' }, query: expect.objectContaining({ type: 'IDInformation' }),
  })]);
  expect(run.stdout).toMatch(/▄|█/); // the QR code
}, 120_000);

it.skipIf(!haveIden3Documents())('--kyc asks for iden3\'s KYCAgeCredential, its kyc-v3 context given in JSONLD_DOCUMENTS_FILE', () => {
  const run = demo(['--kyc'], { ...newUser, ...iden3DocumentsEnv() });
  expect(run.status, run.stderr).toBe(0);
  const request = JSON.parse(Buffer.from(decodeURIComponent(/iden3comm:\/\/\?i_m=(\S+)/.exec(run.stdout)?.[1] ?? ''), 'base64').toString('utf8'));
  expect(request.body.scope[0].query).toMatchObject({ type: 'KYCAgeCredential', credentialSubject: { birthday: { $lt: 20080101 } } });
}, 120_000);
