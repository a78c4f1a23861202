import { describe, expect, it } from 'vitest';
import {
  buildAuthorizationRequest, createDocumentLoader, checkZkpQuerySchemas, validateZkpQueries,
  toIden3Query, ZkpQueryError, ZkpOptionsError, type ZkpQueryConfiguration,
} from '../../src/zkp/index.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/config.js';
import { fixtureConfiguration, fixtureRequest, haveMtpVector, iden3DocumentLoader, KYC_V3, USER_DID, VERIFIER_DID, requestSettings } from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';
import { DocumentUnavailable } from '../../src/jsonld/documents.js';

const haveDocuments = haveIden3Documents();

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
const ISSUER = 'did:polygonid:polygon:mumbai:2qJ689kpoJxcSzB5sAFJtPsSBSrHF5dq722BHMqURL';
const base = { ...requestSettings, callbackUrl: 'https://svc.example/compliance/executions/e1/zkp', verifierDid: VERIFIER_DID, now: NOW };
const qc = (i: number, query: Record<string, unknown>): ZkpQueryConfiguration => ({ id: `q${i}`, query: query as ZkpQueryConfiguration['query'] });

describe.skipIf(!haveMtpVector())('buildAuthorizationRequest', () => {
  it('reproduces the scope of the public test vector from its query configuration', () => {
    const { request, pending } = buildAuthorizationRequest([fixtureConfiguration()], {
      ...base, reason: fixtureRequest.reason, message: fixtureRequest.message, thid: fixtureRequest.thid,
    });
    expect(request.body.scope).toEqual(fixtureRequest.scope);
    expect(request).toEqual({
      id: fixtureRequest.thid,
      thid: fixtureRequest.thid,
      typ: 'application/iden3comm-plain-json',
      type: 'https://iden3-communication.io/authorization/1.0/request',
      from: VERIFIER_DID,
      body: {
        accept: ['iden3comm/v1;env=application/iden3-zkp-json;circuitId=authV2,authV3,authV3-8-32;alg=groth16'],
        reason: 'test',
        message: 'message to sign',
        callbackUrl: base.callbackUrl,
        scope: fixtureRequest.scope,
      },
      created_time: Math.floor(NOW / 1000),
      expires_time: Math.floor(NOW / 1000) + 600,
    });
    expect(pending).toEqual({
      thid: fixtureRequest.thid,
      verifierDid: VERIFIER_DID,
      createdAt: Math.floor(NOW / 1000),
      expiresAt: Math.floor(NOW / 1000) + 600,
      rules: [{ objectId: 'q-residence', requestId: 23, circuitId: 'credentialAtomicQueryMTPV2' }],
      request,
    });
    expect(pending.request).not.toBe(request);
    expect(JSON.parse(JSON.stringify(pending))).toEqual(pending); // persistable as JSON
  });

  it('makes one scope entry per query configuration: Sig V2 by default, $noop without credentialSubject, dotted attributes', () => {
    const { request, pending } = buildAuthorizationRequest([
      qc(0, { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gt', value: 17 }),
      qc(1, { type: 'IDInformation', requestId: 2, operator: '$noop' }),
      qc(2, { type: 'ProofOfResidence', requestId: 3, attribute: 'country', operator: '$in', value: ['FRA', 'DEU'], circuitId: 'credentialAtomicQueryMTPV2' }),
      qc(3, { type: 'IDInformation', requestId: 4, attribute: 'reviewAnswer', operator: '$eq', value: 'GREEN', context: 'ipfs://QmOwn' }),
    ], {
      ...base,
      contexts: { IDInformation: 'https://ctx.example/id.jsonld', ProofOfResidence: 'https://ctx.example/por.jsonld' },
      allowedIssuers: (q) => (q.type === 'ProofOfResidence' ? [ISSUER] : ['*']),
      ttlMs: 60_000,
      accept: null,
    });
    expect(request.body).not.toHaveProperty('accept');
    expect(request.expires_time).toBe(Math.floor(NOW / 1000) + 60);
    expect(request.body.scope).toEqual([
      { id: 1, circuitId: 'credentialAtomicQuerySigV2', query: { allowedIssuers: ['*'], context: 'https://ctx.example/id.jsonld', type: 'IDInformation', credentialSubject: { 'personalData.age': { $gt: 17 } } } },
      { id: 2, circuitId: 'credentialAtomicQuerySigV2', query: { allowedIssuers: ['*'], context: 'https://ctx.example/id.jsonld', type: 'IDInformation' } },
      { id: 3, circuitId: 'credentialAtomicQueryMTPV2', query: { allowedIssuers: [ISSUER], context: 'https://ctx.example/por.jsonld', type: 'ProofOfResidence', credentialSubject: { country: { $in: ['FRA', 'DEU'] } } } },
      { id: 4, circuitId: 'credentialAtomicQuerySigV2', query: { allowedIssuers: ['*'], context: 'ipfs://QmOwn', type: 'IDInformation', credentialSubject: { reviewAnswer: { $eq: 'GREEN' } } } },
    ]);
    expect(pending.rules.map((r) => [r.objectId, r.requestId])).toEqual([['q0', 1], ['q1', 2], ['q2', 3], ['q3', 4]]);
    expect(request.thid).toMatch(/^[0-9a-f-]{36}$/);
    expect(request.id).toBe(request.thid);
  });

  it('uses a fresh thread id per call', () => {
    const a = buildAuthorizationRequest([fixtureConfiguration()], base);
    const b = buildAuthorizationRequest([fixtureConfiguration()], base);
    expect(a.pending.thid).not.toBe(b.pending.thid);
  });

  it('refuses queries the circuits cannot prove, with field problems', () => {
    const e = (() => {
      try {
        buildAuthorizationRequest([fixtureConfiguration({ operator: '$gte', value: 18 })], base); // MTP V2 named
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(ZkpQueryError);
    expect((e as ZkpQueryError).statusCode).toBe(400);
    expect((e as ZkpQueryError).problems).toEqual([
      { pointer: '/queryConfigurations/0/query/operator', message: expect.stringContaining('credentialAtomicQueryMTPV2 cannot prove $gte') },
    ]);
    expect(() => buildAuthorizationRequest([], base)).toThrow(ZkpQueryError);
  });

  it('refuses bad options', () => {
    const c = [fixtureConfiguration()];
    expect(() => buildAuthorizationRequest(c, { ...base, callbackUrl: '/relative' })).toThrow(ZkpOptionsError);
    expect(() => buildAuthorizationRequest(c, { ...base, callbackUrl: 'ftp://x/y' })).toThrow(ZkpOptionsError);
    expect(() => buildAuthorizationRequest(c, { ...base, verifierDid: 'not a did' })).toThrow(/verifierDid/);
    expect(() => buildAuthorizationRequest(c, { ...base, allowedIssuers: [] })).toThrow(/empty list/);
    expect(() => buildAuthorizationRequest(c, { ...base, allowedIssuers: ['did:polygonid:nope'] })).toThrow(/canonical/);
    expect(() => buildAuthorizationRequest(c, { ...base, ttlMs: 0 })).toThrow(ZkpOptionsError);
    expect(() => buildAuthorizationRequest(c, { ...base, defaultCircuitId: 'linkedMultiQuery' as never })).toThrow(ZkpOptionsError);
  });
});

describe('validateZkpQueries', () => {
  const contexts = { IDInformation: 'https://ctx.example/id.jsonld' };
  const problems = (query: Record<string, unknown>, options = {}) => validateZkpQueries([qc(0, query)], { ...requestSettings, contexts, ...options });
  const ok = { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gt', value: 17 };

  it('accepts what the V2 circuits prove', () => {
    for (const q of [
      ok,
      { ...ok, operator: '$lt', value: '2001-02-03' },
      { ...ok, operator: '$eq', value: true },
      { ...ok, operator: '$ne', value: 'RED' },
      { ...ok, operator: '$in', value: Array.from({ length: 64 }, (_, i) => i) },
      { ...ok, operator: '$nin', value: ['a', 1] },
      { type: 'IDInformation', requestId: 7, operator: '$noop' },
      { ...ok, circuitId: 'credentialAtomicQueryMTPV2' },
    ]) expect(problems(q), JSON.stringify(q)).toEqual([]);
  });

  it('refuses $lte, $gte, $exists, $between and $nonbetween on the V2 circuits, pointing to V3', () => {
    for (const circuitId of ['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2']) {
      for (const [op, value] of [['$lte', 18], ['$gte', 18], ['$exists', true], ['$between', [1, 2]], ['$nonbetween', [1, 2]]] as const) {
        expect(problems({ ...ok, operator: op, value, circuitId })).toEqual([
          { pointer: '/queryConfigurations/0/query/operator', message: expect.stringContaining(`${circuitId} cannot prove ${op}: use circuitId credentialAtomicQueryV3`) },
        ]);
      }
    }
  });

  it('checks values as the circuits need them', () => {
    const msg = (q: Record<string, unknown>) => problems(q).map((p) => `${p.pointer} ${p.message}`);
    expect(msg({ ...ok, operator: '$in', value: Array.from({ length: 65 }, (_, i) => i) })[0]).toMatch(/\/value .*at most 64.*got 65/);
    expect(msg({ ...ok, operator: '$in', value: [] })[0]).toMatch(/non-empty array/);
    expect(msg({ ...ok, operator: '$nin', value: [1, true] })[0]).toMatch(/\/value\/1 /);
    expect(msg({ ...ok, value: -1 })[0]).toMatch(/non-negative integer/);
    expect(msg({ ...ok, value: 1.5 })[0]).toMatch(/non-negative integer/);
    expect(msg({ ...ok, value: 'soon' })[0]).toMatch(/ISO 8601/);
    expect(msg({ ...ok, operator: '$eq', value: [1, 2] })[0]).toMatch(/use \$in/);
    expect(msg({ type: 'IDInformation', requestId: 1, operator: '$noop', value: 1 })[0]).toMatch(/\$noop takes no value/);
    expect(msg({ ...ok, attribute: undefined })[0]).toMatch(/\/attribute .*required/);
    expect(msg({ ...ok, attribute: 'a.$b' })[0]).toMatch(/must not start with/);
  });

  it.skipIf(!haveDocuments)('checks requestId, type, context and circuitId', () => {
    const ptr = (q: Record<string, unknown>, o = {}) => problems(q, o).map((p) => p.pointer);
    expect(ptr({ ...ok, requestId: undefined })).toEqual(['/queryConfigurations/0/query/requestId']);
    expect(ptr({ ...ok, requestId: 0 })).toEqual(['/queryConfigurations/0/query/requestId']);
    expect(ptr({ ...ok, requestId: 2 ** 32 })).toEqual(['/queryConfigurations/0/query/requestId']);
    expect(ptr({ ...ok, type: 'Unknown' })).toEqual(['/queryConfigurations/0/query/context']);
    expect(ptr({ ...ok, type: '1bad' })).toContain('/queryConfigurations/0/query/type');
    expect(ptr({ ...ok, context: 'not a url' })).toEqual(['/queryConfigurations/0/query/context']);
    expect(ptr({ ...ok, circuitId: 'credentialAtomicQueryV4' })).toEqual(['/queryConfigurations/0/query/circuitId']);
    const documents = iden3DocumentLoader();
    expect(ptr(ok, { documents })).toEqual(['/queryConfigurations/0/query/type']); // mapped context not held offline
    expect(ptr({ ...ok, context: KYC_V3 }, { documents })).toEqual([]);
    expect(ptr({ ...ok, context: 'https://elsewhere.example/x.jsonld' }, { documents })).toEqual(['/queryConfigurations/0/query/context']);
  });

  it('refuses duplicate request ids and never throws on junk', () => {
    expect(validateZkpQueries([qc(0, ok), qc(1, ok)], { ...requestSettings, contexts })).toEqual([
      { pointer: '/queryConfigurations/1/query/requestId', message: expect.stringContaining('duplicate requestId 1') },
    ]);
    expect(validateZkpQueries([null, { id: 'x' }, { query: 5 }] as never, requestSettings)).toHaveLength(3);
    expect(validateZkpQueries('x' as never, requestSettings)).toEqual([{ pointer: '/queryConfigurations', message: 'queryConfigurations must be an array' }]);
    expect(validateZkpQueries([qc(0, { ...ok, operator: '$regex' })], { ...requestSettings, contexts })[0]?.pointer).toBe('/queryConfigurations/0/query/operator');
  });

  it('translates queries into iden3 queries', () => {
    expect(toIden3Query({ type: 'T', operator: '$noop', attribute: 'a' }, 'https://c', ['*'])).toEqual({ allowedIssuers: ['*'], context: 'https://c', type: 'T' });
    const values = ['x'];
    const q = toIden3Query({ type: 'T', operator: '$in', attribute: 'a.b', value: values }, 'https://c', ['*']);
    expect(q.credentialSubject).toEqual({ 'a.b': { $in: ['x'] } });
    expect(q.credentialSubject?.['a.b']?.$in).not.toBe(values);
  });
});

describe.skipIf(!haveDocuments)('checkZkpQuerySchemas (offline JSON-LD)', () => {
  const documentLoader = iden3DocumentLoader();
  const check = (over: Record<string, unknown>) => checkZkpQuerySchemas([fixtureConfiguration(over)], { documentLoader });

  it('accepts the test vector query and a $noop', async () => {
    expect(await check({})).toEqual([]);
    expect(await check({ operator: '$noop', attribute: undefined, value: undefined })).toEqual([]);
  });

  it('names the field that does not fit the context', async () => {
    expect(await check({ type: 'KYCEmployee' })).toEqual([{ pointer: '/queryConfigurations/0/query/type', message: expect.stringContaining('does not define') }]);
    expect((await check({ attribute: 'nope' }))[0]?.pointer).toBe('/queryConfigurations/0/query/attribute');
    expect((await check({ operator: '$in', value: ['not a number'] }))[0]?.pointer).toBe('/queryConfigurations/0/query/value');
  });
});

describe.skipIf(!haveDocuments)('offline document loader', () => {
  it('serves the bundled contexts and the operator\'s (iden3\'s KYC ones), and refuses every other URL', async () => {
    expect(createDocumentLoader().has(KYC_V3)).toBe(false); // the service ships only what the project wrote
    const load = iden3DocumentLoader();
    const doc = await load(KYC_V3);
    expect(doc.documentUrl).toBe(KYC_V3);
    expect(JSON.stringify(doc.document)).toContain('KYCCountryOfResidenceCredential');
    (doc.document as Record<string, unknown>)['@context'] = 'mutated';
    expect(JSON.stringify((await load(KYC_V3)).document)).toContain('KYCCountryOfResidenceCredential');
    expect(load.has(KYC_V3)).toBe(true);
    expect(load.urls.length).toBe(createDocumentLoader().urls.length + 20); // the bundled ones and iden3's 20
    expect(load.has('https://www.w3.org/2018/credentials/v1')).toBe(true); // $sd answers carry a presentation in it
    await expect(load('https://www.w3.org/ns/did/v1')).rejects.toBeInstanceOf(DocumentUnavailable);
    await expect(load('http://127.0.0.1:1/x')).rejects.toThrow(/not available offline/);
  });

  it('adds operator documents, or serves only them', async () => {
    const own = createDocumentLoader({ documents: { 'https://own.example/ctx.jsonld': { '@context': [{ X: 'https://own.example/#X' }] } }, includeBundled: false });
    expect(own.urls).toEqual(['https://own.example/ctx.jsonld']);
    await expect(own(KYC_V3)).rejects.toBeInstanceOf(DocumentUnavailable);
    expect(() => createDocumentLoader({ documents: { u: 'text' } })).toThrow(TypeError);
  });
});

describe('the ZKP variables', () => {
  it('has defaults for everything', () => {
    expect(loadConfig({}).zkp).toEqual({
      verifierDid: undefined, requestTtlMs: 600_000, defaultCircuitId: 'credentialAtomicQuerySigV2', contexts: {}, allowedIssuers: ['*'],
      circuitsDir: undefined, stateResolvers: {}, proofMaxAgeMs: 3_600_000, clockSkewMs: 300_000,
      stateTransitionDelayMs: 3_600_000, allowPlainMessages: false, responsesPerMinute: 30, answersPerExecution: 5,
    });
  });

  it('reads and checks every variable', () => {
    const cfg = loadConfig({
      PUBLIC_BASE_URL: 'https://svc.example', ZKP_VERIFIER_DID: VERIFIER_DID, ZKP_REQUEST_TTL_SECONDS: '120', ZKP_DEFAULT_CIRCUIT_ID: 'credentialAtomicQueryMTPV2',
      ZKP_CONTEXTS: JSON.stringify({ IDInformation: KYC_V3 }), ZKP_ALLOWED_ISSUERS: `${ISSUER}, ${USER_DID}`,
      ZKP_STATE_RESOLVERS: JSON.stringify({ 'polygon:amoy': { rpcUrl: 'https://rpc.example', contractAddress: `0x${'1a'.repeat(20)}` } }),
      ZKP_PROOF_MAX_AGE_SECONDS: '60', ZKP_ALLOW_PLAIN_RESPONSES: 'true', ZKP_RESPONSES_PER_MINUTE: '0', ZKP_ANSWERS_PER_EXECUTION: '2',
    }).zkp;
    expect(cfg).toMatchObject({ verifierDid: VERIFIER_DID, requestTtlMs: 120_000, defaultCircuitId: 'credentialAtomicQueryMTPV2', allowedIssuers: [ISSUER, USER_DID], proofMaxAgeMs: 60_000, allowPlainMessages: true, responsesPerMinute: 0, answersPerExecution: 2 });
    expect(Object.keys(cfg.stateResolvers)).toEqual(['polygon:amoy']);
    for (const env of [
      { ZKP_VERIFIER_DID: 'did:x' }, { ZKP_REQUEST_TTL_SECONDS: '0' }, { ZKP_REQUEST_TTL_SECONDS: '1.5' },
      { ZKP_DEFAULT_CIRCUIT_ID: 'x' }, { ZKP_CONTEXTS: '[]' }, { ZKP_CONTEXTS: '{"a":1}' }, { ZKP_ALLOWED_ISSUERS: 'me' },
      { ZKP_STATE_RESOLVERS: '{"polygon":{}}' }, { ZKP_STATE_RESOLVERS: '{"polygon:amoy":{"rpcUrl":"x","contractAddress":"0x1"}}' },
      { ZKP_ALLOW_PLAIN_RESPONSES: 'yes' }, { ZKP_RESPONSES_PER_MINUTE: '-1' }, { ZKP_ANSWERS_PER_EXECUTION: '0' }, { ZKP_ANSWERS_PER_EXECUTION: 'many' },
    ]) expect(() => loadConfig(env).zkp, JSON.stringify(env)).toThrow(ConfigError);
  });
});
