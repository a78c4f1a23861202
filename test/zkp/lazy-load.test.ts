/**
 * Memory: @iden3/js-iden3-auth (CommonJS, with its own copies of @0xpolygonid/js-sdk and @iden3/js-crypto, snarkjs,
 * ethers: ~26 MB of RSS) serves only OffChainZKP, so a server where OffChainZKP is not configured must never load it. It is CommonJS, so each of its modules shows up in require.cache once loaded.
 *
 * Module state is per process: this relies on vitest's default isolation (pool forks: each test file in a process of
 * its own). Under --no-isolate another file may have loaded the library first.
 */
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { alwaysLatestStateResolvers } from '../../src/zkp/state.js';
import { auth, executeOnce, makeApp, scenario } from '../helpers.js';
import { fixtureConfiguration, fixtureRequest, haveMtpVector, plainResponse, VERIFIER_DID } from './fixtures.js';

const present = haveMtpVector();

const require = createRequire(import.meta.url);
const iden3AuthModules = () => Object.keys(require.cache).filter((k) => k.replaceAll('\\', '/').includes('/@iden3/js-iden3-auth/'));

let app: FastifyInstance | undefined;

afterAll(async () => {
  await app?.close();
});

const execute = (scenarioId: string) => executeOnce(app!, scenarioId);
const create = (id: string | undefined, input: unknown) =>
  app!.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: id === undefined ? { input } : { id, input } });
const zkpScenario = (configuration = fixtureConfiguration()) =>
  scenario({ type: 'OffChainZKP', message: fixtureRequest.message, queryConfigurations: [configuration] });

// In order even under --sequence.shuffle: the last test loads the library for the rest of the file.
describe.skipIf(!present)('@iden3/js-iden3-auth loads only where OffChainZKP is configured (ZKP_VERIFIER_DID)', { shuffle: false }, () => {
  it('is not loaded by starting the app and creating and executing a ChallengeQuery scenario', async () => {
    app = await makeApp();
    expect((await create('cq', scenario())).statusCode).toBe(201);
    const results = await execute('cq');
    expect(results.map((r: { result: { status: string } }) => r.result.status)).toEqual(['valid', 'valid']);
    expect(iden3AuthModules().slice(0, 3)).toEqual([]);
  });

  it('is not loaded by creating (schema check included) and executing an OffChainZKP scenario where it is not configured', async () => {
    const created = await create('zk', zkpScenario());
    expect(created.statusCode, created.body).toBe(201);
    const refused = await create(undefined, zkpScenario(fixtureConfiguration({ attribute: 'noSuchField' })));
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors.map((e: { pointer: string }) => e.pointer)).toContain('/input/queryConfigurations/0/query/attribute');
    const result = (await execute('zk'))[0]!;
    expect(result.result.status).toBe('error');
    expect(result.result.result.reasons.join(' ')).toContain('ZKP_VERIFIER_DID is unset');
    expect(iden3AuthModules().slice(0, 3)).toEqual([]);
    await app!.close();
    app = undefined;
  });

  it('loads at start where ZKP_VERIFIER_DID is set; the authorization request and the wallet\'s answer work', async () => {
    app = await makeApp({ ZKP_VERIFIER_DID: VERIFIER_DID, PUBLIC_BASE_URL: 'https://compliance.example', ZKP_ALLOW_PLAIN_RESPONSES: 'true', ZKP_PROOF_MAX_AGE_SECONDS: '999999999' },
      { zkpStateResolvers: alwaysLatestStateResolvers() });
    expect(iden3AuthModules().length).toBeGreaterThan(0);
    expect((await create('zk', zkpScenario())).statusCode).toBe(201);
    const result = (await execute('zk'))[0]!;
    expect(result.result.status).toBe('pending');
    const request = result.result.authorizationRequest as { thid: string; body: { scope: unknown } };
    expect(request.body.scope).toEqual(fixtureRequest.scope);

    const answered = await app.inject({
      method: 'POST', url: `/compliance/executions/${result.executionId}/zkp-response`, headers: { 'content-type': 'text/plain' },
      payload: plainResponse({ thid: request.thid }),
    });
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.json().results[0].result).toMatchObject({ status: 'valid', result: { is_valid: true } });
  });
});
