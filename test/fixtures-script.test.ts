/**
 * `npm run fixtures` (scripts/fixtures.mjs), offline: a server on 127.0.0.1 stands for raw.githubusercontent.com and
 * serves the upstream files in the shape upstream publishes them (test source code holding the values), made from the
 * team's copy of the data (../shared/fixtures). The script must write every file the tests read and refuse one whose
 * SHA-256 differs from the pinned value.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { haveSharedFixtures, sharedFixture } from './shared-fixtures.js';

type Json = Record<string, any>;
const run = promisify(execFile);
const SCRIPT = path.resolve(import.meta.dirname, '../scripts/fixtures.mjs');
const JWZ_VECTORS = [
  'zkp-v3-vectors/v3-nullifier-authv2.json', 'zkp-v3-vectors/linked-v3-lmq10-authv2.json', 'zkp-v3-vectors/sd-sigv2-authv2.json',
  'zkp-stable-vectors/stable-v3-lmq3-authv3-8-32.json',
];
const WRITTEN = [
  'iden3/jsonld-and-json-schemas.json', 'iden3/auth-request-mtp-v2.json', 'iden3/auth-response-mtp-v2.json',
  'realworld/jsonld-documents.json', 'realworld/credentials/js-sdk-kycage-bjj-mtp-rhs.json',
  'realworld/credentials/js-sdk-kycage-bjj-genesis-rhs.json', 'realworld/credentials/js-sdk-kycage-bjj-mtp-agent.json',
  'realworld/credentials/go-schema-processor-kycage-bjj-issuer-status.json',
  'realworld/credentials/polygonid-dev-testnewtype-bjj-mtp.json', 'realworld/credentials/privado-testing-operators-bjj.json',
  ...JWZ_VECTORS,
];
const present = haveSharedFixtures(...WRITTEN);
const read = (relative: string): Json => JSON.parse(fs.readFileSync(sharedFixture(relative), 'utf8')) as Json;

/** A value as TypeScript source writes it: bare keys, single quotes, trailing commas, `raw` text where given. */
function ts(value: unknown, raw: Map<unknown, string> = new Map()): string {
  if (raw.has(value)) return raw.get(value)!;
  if (Array.isArray(value)) return `[\n${value.map((v) => `  ${ts(v, raw)},\n`).join('')}]`;
  if (value !== null && typeof value === 'object') {
    return `{\n${Object.entries(value).map(([k, v]) => `  ${/^[A-Za-z_$][\w$]*$/.test(k) ? k : `'${k}'`}: ${ts(v, raw)},\n`).join('')}}`;
  }
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value);
}

/** The upstream files at the commits the script pins, keyed by `<owner>/<repo>/<commit>/<path>`. */
function upstreamFiles(): Map<string, string> {
  const js = (p: string) => `0xPolygonID/js-sdk/bf5ea0e6731026128cd1a2a6344af6ac5bf93378/${p}`;
  const gsp = (p: string) => `iden3/go-schema-processor/4d32189a8afff80ef17b5d6ce41be9ee27c155c0/${p}`;
  const vocab = (p: string) => `iden3/claim-schema-vocab/4ebe1a19789d738de6092bf8f3c554f343521f95/${p}`;
  const documents = read('iden3/jsonld-and-json-schemas.json');
  const real = read('realworld/jsonld-documents.json');
  const request = read('iden3/auth-request-mtp-v2.json');
  const response = read('iden3/auth-response-mtp-v2.json');
  const credential = (name: string) => `\`${JSON.stringify(read(`realworld/credentials/${name}.json`), null, 4)}\``;
  const { id, ...proof } = response.proof;
  expect(id).toBe(request.scope[0].id);
  const idMarker = {};
  const auth = (p: string) => `iden3/js-iden3-auth/94c93bbf9ca2327e8fe0688253feabcc6b7852ce/${p}`;
  const [v3, linked, sd] = JWZ_VECTORS.slice(0, 3).map(read) as [Json, Json, Json];
  const stable = read('zkp-stable-vectors/stable-v3-lmq3-authv3-8-32.json');
  // As upstream writes them: js-sdk's constants by name, optional, a numeric session id, query keys in its order.
  const sdkNames = new Map<unknown, string>([
    ['application/iden3comm-plain-json', 'PROTOCOL_CONSTANTS.MediaType.PlainMessage'],
    ['credentialAtomicQueryV3-beta.1', 'CircuitId.AtomicQueryV3'], ['BJJSignature2021', 'ProofType.BJJSignature'],
    ['Iden3SparseMerkleTreeProof', 'ProofType.Iden3SparseMerkleTreeProof'],
  ]);
  const v3Request = {
    id: '7d22275a-b518-45bb-8ee1-85e12abd8532', typ: 'application/iden3comm-plain-json',
    body: {
      reason: 'reason', message: v3.message, did_doc: {},
      scope: (v3.scope as Json[]).map(({ id: scopeId, circuitId, query, params }) => ({
        id: scopeId, circuitId, optional: false,
        ...(params && { params: { nullifierSessionId: Number(params.nullifierSessionId) } }),
        query: Object.fromEntries(Object.entries(query as Json).reverse()),
      })),
    },
    from: v3.verifierDid,
  };
  const vpMarker = {};
  const stableResponse = structuredClone(stable.response);
  stableResponse.body.scope = (stableResponse.body.scope as Json[]).map(({ id: scopeId, circuitId, ...rest }) => ({ id: scopeId, circuitId, vp: vpMarker, ...rest }));
  return new Map([
    [js('tests/mocks/schema.ts'), `const testSchemas = ${ts(Object.entries(documents).map(([url, doc]) => ({ url, doc: JSON.stringify(doc) })))};\n`],
    ['iden3/js-iden3-auth/94c93bbf9ca2327e8fe0688253feabcc6b7852ce/test/auth.test.ts', [
      "it('TestVerifyWithAtomicMTPProof', async () => {",
      `const sender = ${ts(request.sender)};`, `const callback = ${ts(request.callbackUrl)};`,
      `const userId = ${ts(response.userId)};`, `const reason = ${ts(request.reason)};`, `const message = ${ts(request.message)};`,
      `request.thid = ${ts(request.thid)}; // the thread`,
      `const proofRequest: ZeroKnowledgeProofRequest = ${ts(request.scope[0])};`,
      `const mtpProof: ZeroKnowledgeProofResponse = ${ts({ id: idMarker, ...proof }, new Map([[idMarker, 'proofRequest.id']]))};`,
      "it('verify jwz with selective disclosure', async () => {",
      `const sender = ${ts(sd.verifierDid)};`, "const reason = 'age verification';",
      `const request = createAuthorizationRequestWithMessage(\n reason,\n ${ts(sd.message)},\n sender,\n callback\n );`,
      `const token =\n ${ts(sd.token)};`,
    ].join('\n')],
    [auth('test/atomicV3.test.ts'), [
      "it('TestVerifyV3MessageWithSigProof_NonMerklized', async () => {\n const token = 'not this one';",
      "it('auth with atomicV3 (nullifier, 2 req (merklized and non-merklized))', async () => {",
      `const request: AuthorizationRequestMessage = ${ts(v3Request, sdkNames)};`, `const token =\n ${ts(v3.token)};`,
    ].join('\n')],
    [auth('test/linked-proofs.test.ts'), [
      "describe('Linked proofs verification', () => {\n it('should verification pass', async () => {",
      `const authRequest: AuthorizationRequestMessage = ${ts({ id: 'f5bc', typ: 'application/iden3comm-plain-json', body: { message: linked.message, scope: [] }, from: linked.verifierDid }, sdkNames)};`,
      `const tokenString =\n ${ts(linked.token)};`,
    ].join('\n')],
    ['iden3/js-iden3-auth/675cdc8100ecff042c4ce1ce4908b05a9c9e8fcd/test/atomicV3.stable.test.ts', [
      `const authRequest: AuthorizationRequestMessage = ${ts(stable.request)} as AuthorizationRequestMessage;`,
      "it('TestVerifyV3MessageWithSigProof_NonMerklized', async () => {",
      `const message: AuthorizationResponseMessage = ${ts(stableResponse, new Map([[vpMarker, 'undefined']]))} as AuthorizationResponseMessage;`,
      "it('TestFullVerify - Auth V3-8-32', async () => {", `const token =\n ${ts(stable.token)};`,
    ].join('\n')],
    [vocab('schemas/json-ld/kyc-v3.json-ld'), JSON.stringify(real['https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld'])],
    [vocab('schemas/json/KYCAgeCredential-v3.json'), JSON.stringify(real['https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json/KYCAgeCredential-v3.json'])],
    [gsp('merklize/testdata/ipfs/testNewType.jsonld'), JSON.stringify(real['ipfs://QmeMevwUeD7o6hjfmdaeFD1q4L84hSDiRjeXZLi1bZK1My'])],
    [gsp('json/validator_test.go'), `const schema07 = \`${JSON.stringify(real['ipfs://QmQVeb5dkz5ekDqBrYVVxBFQZoCbzamnmMUn9B8twCEgDL'])}\`\n`],
    [js('tests/credentials/credential-validation.test.ts'), [
      `it('Validate BJJ signature proof genesis', async () => {\n const input = ${credential('js-sdk-kycage-bjj-genesis-rhs')};`,
      `it('Validate BJJ signature proof agent status', async () => {\n const input = ${credential('js-sdk-kycage-bjj-mtp-agent')};`,
      `it('Validate SMT proof', async () => {\n const input = ${credential('js-sdk-kycage-bjj-mtp-rhs')};`,
    ].join('\n')],
    [gsp('verifiable/credential_test.go'), `func TestW3CCredential_ValidateBJJSignatureProofIssuerStatus(t *testing.T) {\n\tin := ${credential('go-schema-processor-kycage-bjj-issuer-status')}\n`],
    ['iden3/js-jsonld-merklization/db9083c57c1c8a7f9f3fd60c25a5d472d5c252a5/tests/data.ts', `export const testDocumentIPFS = ${credential('polygonid-dev-testnewtype-bjj-mtp')};\n`],
    [js('tests/credentials/credential-wallet.test.ts'), `it('Credential search by query', async () => {\n W3CCredential.fromJSON(JSON.parse(${credential('privado-testing-operators-bjj')}));`],
  ]);
}

describe.skipIf(!present)('npm run fixtures, from a local stand-in for raw.githubusercontent.com', () => {
  let files: Map<string, string>;
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    files = upstreamFiles();
    server = http.createServer((req, res) => {
      const body = files.get(decodeURIComponent(req.url!.slice(1)));
      res.statusCode = body === undefined ? 404 : 200;
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const fixtures = (dir: string) => run(process.execPath, [SCRIPT], { env: { ...process.env, FIXTURES_BASE_URL: base, FIXTURES_DIR: dir } })
    .then(({ stdout }) => ({ code: 0, stdout }), (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }));

  it('writes every file the tests read, each equal to the team\'s copy', async () => {
    const dir = tempDir('fixtures-');
    const { code, stdout } = await fixtures(dir);
    expect(stdout).toContain(`${WRITTEN.length} fixtures written`);
    expect(code).toBe(0);
    for (const relative of WRITTEN) {
      expect(JSON.parse(fs.readFileSync(path.join(dir, relative), 'utf8')), relative).toEqual(read(relative));
    }
  });

  it('refuses a file whose SHA-256 differs (one proof digit changed upstream): not written, exit 1, the others written', async () => {
    const auth = [...files.keys()].find((k) => k.endsWith('test/auth.test.ts'))!;
    const original = files.get(auth)!;
    files.set(auth, original.replace("'1679323038'", "'1679323039'"));
    try {
      const dir = tempDir('fixtures-');
      const { code, stdout } = await fixtures(dir);
      expect(code).toBe(1);
      expect(stdout).toMatch(/FAILED iden3\/auth-response-mtp-v2\.json: SHA-256 [0-9a-f]{64}, expected [0-9a-f]{64}: not written/);
      expect(fs.existsSync(path.join(dir, 'iden3/auth-response-mtp-v2.json'))).toBe(false);
      expect(fs.existsSync(path.join(dir, 'iden3/auth-request-mtp-v2.json'))).toBe(true);
    } finally {
      files.set(auth, original);
    }
  });

  it.each(JWZ_VECTORS)('refuses %s when one character of its token differs upstream: not written, exit 1', async (relative) => {
    const { token } = read(relative);
    const source = [...files.entries()].find(([, text]) => text.includes(token))!;
    // The token's last character, one base64url letter for another.
    const changed = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    files.set(source[0], source[1].replace(token, changed));
    try {
      const dir = tempDir('fixtures-');
      const { code, stdout } = await fixtures(dir);
      expect(code).toBe(1);
      expect(stdout).toContain(`FAILED ${relative}: SHA-256 `);
      expect(stdout.match(/^FAILED /gm)).toHaveLength(1);
      expect(fs.existsSync(path.join(dir, relative))).toBe(false);
    } finally {
      files.set(source[0], source[1]);
    }
  });
});
