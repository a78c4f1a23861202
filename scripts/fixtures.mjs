#!/usr/bin/env node
/**
 * `npm run fixtures`: fetches the public test data the zero-knowledge and real-credential tests need (iden3's test
 * vectors, JSON-LD contexts, real credentials) from their upstream repositories, each file pinned by commit, builds
 * the files the tests read and writes them under .fixtures/ (git-ignored) once each matches its SHA-256 below.
 * test/shared-fixtures.ts reads ../shared/fixtures/ first (the team's copy beside the repository) and .fixtures/ next.
 *
 * Upstream publishes most of this data inside test source code (TypeScript object literals and template strings, Go
 * raw strings), not as files: each source names the text that precedes the value, and the value is read with a
 * parser for literals (never evaluated). A file the team put together (a map of URL -> document, a request written
 * out from the calls that build it in the upstream test) is built here from its upstream parts; the SHA-256 is that
 * of the bytes written (JSON, two-space indent), computed from the team's copy with `node scripts/fixtures.mjs
 * --hashes ../shared/fixtures`.
 *
 * The zero-knowledge vectors (zkp-v3-vectors/, zkp-stable-vectors/) are read from js-iden3-auth's tests: each JWZ
 * token, the verifier DID and message of its request (the V3 one's scope too, written as this service writes it), the
 * stable test's request and plain response; their source, licence and note lines (the team's words) are written here.
 *
 * Not fetched (no test reads them): offchain-vectors/ and iden3/kyc-v3.jsonld (a copy of one entry of
 * iden3/jsonld-and-json-schemas.json).
 *
 * FIXTURES_BASE_URL (default https://raw.githubusercontent.com) is where `<owner>/<repo>/<commit>/<path>` is read;
 * FIXTURES_DIR (default .fixtures) where the files go. Exit 1 when a file cannot be fetched or built or its SHA-256
 * differs; nothing is written for that file then.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const JS_SDK = { repo: '0xPolygonID/js-sdk', commit: 'bf5ea0e6731026128cd1a2a6344af6ac5bf93378' };
const AUTH = { repo: 'iden3/js-iden3-auth', commit: '94c93bbf9ca2327e8fe0688253feabcc6b7852ce' };
// Later, with the stable circuits (authV3-8-32, credentialAtomicQueryV3-16-16-64, linkedMultiQuery3).
const AUTH_STABLE = { repo: 'iden3/js-iden3-auth', commit: '675cdc8100ecff042c4ce1ce4908b05a9c9e8fcd' };
const GSP = { repo: 'iden3/go-schema-processor', commit: '4d32189a8afff80ef17b5d6ce41be9ee27c155c0' };
const MERKLIZATION = { repo: 'iden3/js-jsonld-merklization', commit: 'db9083c57c1c8a7f9f3fd60c25a5d472d5c252a5' };
const VOCAB = { repo: 'iden3/claim-schema-vocab', commit: '4ebe1a19789d738de6092bf8f3c554f343521f95' };

const KYC_V3 = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld';
const KYC_AGE_V3 = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json/KYCAgeCredential-v3.json';
const OPERATORS_SCHEMA = 'ipfs://QmWDmZQrtvidcNK7d6rJwq7ZSi8SUygJaKepN7NhKtGryc';
const MTP_TEST = "it('TestVerifyWithAtomicMTPProof'";
const AUTH_LICENCE = 'AGPL-3.0 (the licence of iden3/js-iden3-auth); public test data, used unchanged to test against';
/** The @0xpolygonid/js-sdk constants js-iden3-auth's V3 tests name (their values in js-sdk since 1.9). */
const SDK_NAMES = {
  'PROTOCOL_CONSTANTS.MediaType.PlainMessage': 'application/iden3comm-plain-json',
  'CircuitId.AtomicQueryV3': 'credentialAtomicQueryV3-beta.1',
  'CircuitId.LinkedMultiQuery10': 'linkedMultiQuery10-beta.1',
  'ProofType.BJJSignature': 'BJJSignature2021',
  'ProofType.Iden3SparseMerkleTreeProof': 'Iden3SparseMerkleTreeProof',
};

// ---- Reading values out of upstream source text -------------------------------------------------------------------

/**
 * Parses the JavaScript literal at `text[start]`: objects (quoted or bare keys), arrays, '…' "…" and `…` strings
 * (without ${}), numbers, true/false/null/undefined, comments and trailing commas. A bare name or a dotted path takes
 * its value from `names`; anything else is refused. Returns [value, end].
 */
function parseLiteral(text, start, names = {}) {
  let i = start;
  const fail = (what) => { throw new Error(`${what} at offset ${i}: ${JSON.stringify(text.slice(i, i + 40))}`); };
  const space = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i])) i++;
      if (text.startsWith('//', i)) i = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
      else if (text.startsWith('/*', i)) i = text.indexOf('*/', i) + 2;
      else return;
    }
  };
  const string = () => {
    const quote = text[i++];
    let out = '';
    while (text[i] !== quote) {
      if (i >= text.length) fail('unterminated string');
      if (quote === '`' && text.startsWith('${', i)) fail('template substitution');
      if (text[i] === '\\') {
        const c = text[i + 1];
        const simple = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', 0: '\0' };
        if (c === 'u') { out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)); i += 6; continue; }
        out += simple[c] ?? c;
        i += 2;
        continue;
      }
      out += text[i++];
    }
    i++;
    return out;
  };
  const name = () => {
    const m = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*/.exec(text.slice(i, i + 200));
    if (!m) fail('unexpected text');
    i += m[0].length;
    return m[0];
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      const out = {};
      for (;;) {
        space();
        if (text[i] === '}') { i++; return out; }
        const key = /['"`]/.test(text[i]) ? string() : name();
        space();
        if (text[i++] !== ':') fail('expected ":"');
        out[key] = value();
        space();
        if (text[i] === ',') i++;
        else if (text[i] !== '}') fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const out = [];
      for (;;) {
        space();
        if (text[i] === ']') { i++; return out; }
        out.push(value());
        space();
        if (text[i] === ',') i++;
        else if (text[i] !== ']') fail('expected "," or "]"');
      }
    }
    if (/['"`]/.test(c)) return string();
    const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (number) { i += number[0].length; return Number(number[0]); }
    const word = name();
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'null') return null;
    if (word === 'undefined') return undefined; // dropped where written, as JSON.stringify drops it
    if (Object.hasOwn(names, word)) return names[word];
    return fail(`unknown name ${word}`);
  };
  const out = value();
  return [out, i];
}

/** The literal that follows `anchor` (after `within`, when given) in `text`: the first `{`, `[` or string after it. */
function literalAfter(text, anchor, { within, names } = {}) {
  const from = within === undefined ? 0 : text.indexOf(within);
  if (from === -1) throw new Error(`"${within}" is not in the file`);
  const at = text.indexOf(anchor, from);
  if (at === -1) throw new Error(`"${anchor}" is not in the file`);
  const start = text.slice(at + anchor.length).search(/[{[`'"]/) + at + anchor.length;
  return parseLiteral(text, start, names)[0];
}

/** The JSON in the string that follows `anchor` (a template string, a Go raw string, a JSON.parse argument). */
const jsonAfter = (text, anchor, within) => JSON.parse(literalAfter(text, anchor, { within }));

// ---- What is fetched and how each file is built ---------------------------------------------------------------------

const file = (source, filePath) => ({ ...source, path: filePath });

/** The map URL -> document of js-sdk's test document loader (tests/mocks/schema.ts), as the tests hand it in. */
const sdkSchemas = (schemaTs) => Object.fromEntries(
  literalAfter(schemaTs, 'const testSchemas =').map(({ url, doc }) => [url, JSON.parse(doc)]));

/** A credential written as JSON in a test file (a template string, a Go raw string). */
const credential = (source, filePath, anchor, within) => ({
  sources: { test: file(source, filePath) },
  build: ({ test }) => jsonAfter(test, anchor, within),
});

/**
 * A scope entry of an upstream request as this service writes it (src/zkp/request.ts; test/zkp/verify-v3.test.ts
 * compares the two): its keys in that order, without `optional`, the nullifier session id a string.
 */
function serviceScope({ id, circuitId, query, params }) {
  const keys = ['allowedIssuers', 'context', 'type', 'credentialSubject', 'proofType', 'groupId'];
  const sessionId = params?.nullifierSessionId;
  return {
    id,
    circuitId,
    query: Object.fromEntries(keys.filter((k) => query[k] !== undefined).map((k) => [k, query[k]])),
    ...(sessionId !== undefined && { params: { nullifierSessionId: String(sessionId) } }),
  };
}

/** The verifier DID and message of an upstream request, and its scope as this service writes it when asked. */
const requestFields = (request, { scope = false } = {}) => ({
  verifierDid: request.from,
  message: request.body.message,
  ...(scope && { scope: request.body.scope.map(serviceScope) }),
});

/**
 * A JWZ vector of a js-iden3-auth test at AUTH (`title`: its describe / it names): the team's source, licence and note
 * lines, then the fields `read` takes from that test, given a reader of the literal after an anchor within it.
 */
const authVector = ({ name, sha256, testPath, title, note, read }) => ({
  path: `zkp-v3-vectors/${name}.json`,
  sha256,
  sources: { test: file(AUTH, testPath) },
  build: ({ test }) => ({
    source: `iden3/js-iden3-auth, ${testPath}, test '${title}', commit ${AUTH.commit}`,
    licence: AUTH_LICENCE,
    note,
    ...read((anchor) => literalAfter(test, anchor, { within: `it('${title.split(' / ').at(-1)}'`, names: SDK_NAMES })),
  }),
});

const FIXTURES = [
  {
    path: 'iden3/jsonld-and-json-schemas.json',
    sha256: '681be61bd90826eccc49392451c2cb616e647257353c3dcf798446515629bbd1',
    sources: { schemas: file(JS_SDK, 'tests/mocks/schema.ts') },
    build: ({ schemas }) => sdkSchemas(schemas),
  },
  {
    // The request the proof answers, written out from the calls that make it in the upstream test
    // (createAuthorizationRequestWithMessage(reason, message, sender, callback), thid, one scope entry).
    path: 'iden3/auth-request-mtp-v2.json',
    sha256: '0f9dba11632603ffc6d2bce9e9bc8990b04902c085f570387810c57a3a2d482a',
    sources: { test: file(AUTH, 'test/auth.test.ts') },
    build: ({ test }) => {
      const at = (anchor) => literalAfter(test, anchor, { within: MTP_TEST });
      return {
        description: 'The authorization request that auth-response-mtp-v2.json answers (public test vector of the iden3 auth library, March 2024). The response proves credentialAtomicQueryMTPV2 for request id 23: countryCode $nin [840,120,340,509] on KYCCountryOfResidenceCredential (kyc-v3 context). It verifies offline with the circuit verification keys shipped in @iden3/js-iden3-auth, a state resolver that answers latest:true, a JSON-LD loader serving kyc-v3.jsonld, and a proof-age window wide enough for its 2023 timestamp.',
        reason: at('const reason ='),
        message: at('const message ='),
        sender: at('const sender ='),
        callbackUrl: at('const callback ='),
        thid: at('request.thid ='),
        scope: [at('const proofRequest: ZeroKnowledgeProofRequest =')],
      };
    },
  },
  {
    path: 'iden3/auth-response-mtp-v2.json',
    sha256: 'ed78bdcc6f27935177161c654699a8e0976fedbc7b137f9d30eb38842f3db382',
    sources: { test: file(AUTH, 'test/auth.test.ts') },
    build: ({ test }) => {
      const at = (anchor, names) => literalAfter(test, anchor, { within: MTP_TEST, names });
      const request = at('const proofRequest: ZeroKnowledgeProofRequest =');
      return {
        userId: at('const userId ='),
        sender: at('const sender ='),
        proof: at('const mtpProof: ZeroKnowledgeProofResponse =', { 'proofRequest.id': request.id }),
      };
    },
  },
  {
    path: 'realworld/jsonld-documents.json',
    sha256: 'e9f35a6ff288596f8ee488591015b7e78c3e0dc3fb4f4cd99d0e6bf09b518ffa',
    sources: {
      kycV3: file(VOCAB, 'schemas/json-ld/kyc-v3.json-ld'),
      kycAgeV3: file(VOCAB, 'schemas/json/KYCAgeCredential-v3.json'),
      testNewType: file(GSP, 'merklize/testdata/ipfs/testNewType.jsonld'),
      validatorTest: file(GSP, 'json/validator_test.go'),
      schemas: file(JS_SDK, 'tests/mocks/schema.ts'),
    },
    build: ({ kycV3, kycAgeV3, testNewType, validatorTest, schemas }) => {
      const sdk = sdkSchemas(schemas);
      return {
        [KYC_V3]: JSON.parse(kycV3),
        [KYC_AGE_V3]: JSON.parse(kycAgeV3),
        'ipfs://QmeMevwUeD7o6hjfmdaeFD1q4L84hSDiRjeXZLi1bZK1My': JSON.parse(testNewType),
        'ipfs://QmQVeb5dkz5ekDqBrYVVxBFQZoCbzamnmMUn9B8twCEgDL': jsonAfter(validatorTest, 'const schema07 ='),
        'ipfs://Qmb48rJ5SiQMLXjVkaLQB6fWbT7C8LK75MHsCoHv8GAc15': sdk['ipfs://Qmb48rJ5SiQMLXjVkaLQB6fWbT7C8LK75MHsCoHv8GAc15'],
        [OPERATORS_SCHEMA]: sdk[OPERATORS_SCHEMA],
        // The credential names the schema by its gateway URL.
        'https://ipfs.io/ipfs/QmWDmZQrtvidcNK7d6rJwq7ZSi8SUygJaKepN7NhKtGryc': sdk[OPERATORS_SCHEMA],
      };
    },
  },
  // name, SHA-256, repository, file, the text before the JSON, the test it is in.
  ...[
    ['js-sdk-kycage-bjj-mtp-rhs', 'bf131200d27fddcdd137f2fe26d99b79fb9255cda7d480dd8e2fd40a3833cc62', JS_SDK, 'tests/credentials/credential-validation.test.ts', 'const input =', "it('Validate SMT proof'"],
    ['js-sdk-kycage-bjj-genesis-rhs', '23f09736fb68059ccdec525329a77220ad6009c7f50fe01049d885461433d2c3', JS_SDK, 'tests/credentials/credential-validation.test.ts', 'const input =', "it('Validate BJJ signature proof genesis'"],
    ['js-sdk-kycage-bjj-mtp-agent', '928c7ad6bedf6acd2c457ef14427df254a6668ad8fbe6a5028ecbc749edfa0d9', JS_SDK, 'tests/credentials/credential-validation.test.ts', 'const input =', "it('Validate BJJ signature proof agent status'"],
    ['go-schema-processor-kycage-bjj-issuer-status', '391bbe13df0d1065a98835a21b663e88ea59ab8447fdd77557a9fa11f9d52294', GSP, 'verifiable/credential_test.go', ':=', 'func TestW3CCredential_ValidateBJJSignatureProofIssuerStatus('],
    ['polygonid-dev-testnewtype-bjj-mtp', 'cc8ce1aed83c6b4e130f2f360f278d35b7963c44335162b272c4db19e5883e9e', MERKLIZATION, 'tests/data.ts', 'export const testDocumentIPFS ='],
    ['privado-testing-operators-bjj', '7b046579c93199c204dca403ad4d74b0bcd073d21d8c3db83926429f075dcb9a', JS_SDK, 'tests/credentials/credential-wallet.test.ts', 'JSON.parse(', "it('Credential search by query'"],
  ].map(([name, sha256, ...from]) => ({ path: `realworld/credentials/${name}.json`, sha256, ...credential(...from) })),
  // name, SHA-256, test file, test (describe / it), the fields read from it (given the literal after an anchor), note.
  ...[
    ['v3-nullifier-authv2', '8dc4a7d34b5f082dd10794a22db665add16cabd6699492a84a985b29f81f8e96', 'test/atomicV3.test.ts', 'auth with atomicV3 (nullifier, 2 req (merklized and non-merklized))',
      (at) => ({ ...requestFields(at('const request: AuthorizationRequestMessage ='), { scope: true }), token: at('const token =') }),
      'A JWZ (authV2) authorization response with two credentialAtomicQueryV3-beta.1 proofs: request 1 BJJSignature2021 on KYCAgeCredential (kyc-nonmerklized) documentType $eq 99, groupId 2; request 2 Iden3SparseMerkleTreeProof on KYCEmployee (kyc-v101) hireDate $eq 2023-12-11, groupId 1, nullifierSessionId 12345. The request is that test\'s, its scope written as this service writes it.'],
    ['linked-v3-lmq10-authv2', '7e82a593592666e25ce3900acc6f95d9535e9ff7ed09cb7bd462fb67d04d09d1', 'test/linked-proofs.test.ts', 'Linked proofs verification / should verification pass',
      (at) => ({ ...requestFields(at('const authRequest: AuthorizationRequestMessage =')), token: at('const tokenString =') }),
      'A JWZ (authV2) answer with credentialAtomicQueryV3-beta.1 proofs for requests 1 and 3 and a linkedMultiQuery10-beta.1 proof for request 2 (group 1 with request 3: KYCEmployee documentType $eq 1, position $eq boss and $ne employee).'],
    // The request is createAuthorizationRequestWithMessage(reason, message, sender, callback): message follows `reason,`.
    ['sd-sigv2-authv2', 'f25738bdfa381a236f97c357b9288609d59360bb6c7724cddc4c7dbec6a4c652', 'test/auth.test.ts', 'verify jwz with selective disclosure',
      (at) => ({ verifierDid: at('const sender ='), message: at('reason,'), token: at('const token =') }),
      'A JWZ (authV2) answer with a credentialAtomicQuerySigV2 selective-disclosure proof for request 1: KYCAgeCredential (kyc-v4) birthday, disclosed in its verifiable presentation.'],
  ].map(([name, sha256, testPath, title, read, note]) => authVector({ name, sha256, testPath, title, read, note })),
  {
    path: 'zkp-stable-vectors/stable-v3-lmq3-authv3-8-32.json',
    sha256: '084c9055a07f552f366f41ed384c3f793dacc9408d11a81c8c6bef193c6dbda7',
    sources: { test: file(AUTH_STABLE, 'test/atomicV3.stable.test.ts') },
    build: ({ test }) => ({
      source: `iden3/js-iden3-auth, test/atomicV3.stable.test.ts, tests "TestVerifyV3MessageWithSigProof_NonMerklized" and "TestFullVerify - Auth V3-8-32", commit ${AUTH_STABLE.commit}`,
      licence: AUTH_LICENCE,
      note: 'The request asks linkedMultiQuery10 (id 2) and credentialAtomicQueryV3 (id 3, nullifier session 12345, group 1); the wallet answers with the subversions linkedMultiQuery3 and credentialAtomicQueryV3-16-16-64. The token is the same response as a JWZ proved with authV3-8-32. Every Groth16 proof here verifies with the verification keys @iden3/js-iden3-auth 1.14.0 ships, and fails when a public signal changes. The upstream tests verify with their own mocked state resolvers (issuer and user states on polygon amoy).',
      request: literalAfter(test, 'const authRequest: AuthorizationRequestMessage ='),
      response: literalAfter(test, 'const message: AuthorizationResponseMessage =', { within: "it('TestVerifyV3MessageWithSigProof_NonMerklized'" }),
      token: literalAfter(test, 'const token =', { within: "it('TestFullVerify - Auth V3-8-32'" }),
    }),
  },
];

/** The bytes written for a fixture's value: what its SHA-256 is of. */
const serialize = (value) => `${JSON.stringify(value, null, 2)}\n`;
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

async function fetchText(base, source) {
  const url = `${base.replace(/\/$/, '')}/${source.repo}/${source.commit}/${source.path}`;
  const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

/** Fetches, builds, checks and writes every fixture; returns the paths of those that failed. */
async function fetchFixtures({ base = 'https://raw.githubusercontent.com', dir = path.join(ROOT, '.fixtures'), log = console.log } = {}) {
  const cache = new Map();
  const failed = [];
  for (const fixture of FIXTURES) {
    try {
      const parts = {};
      for (const [key, source] of Object.entries(fixture.sources)) {
        const id = `${source.repo}/${source.commit}/${source.path}`;
        if (!cache.has(id)) cache.set(id, fetchText(base, source));
        parts[key] = await cache.get(id);
      }
      const bytes = serialize(fixture.build(parts));
      const got = sha256(bytes);
      if (got !== fixture.sha256) throw new Error(`SHA-256 ${got}, expected ${fixture.sha256}: not written`);
      const target = path.join(dir, fixture.path);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, bytes);
      log(`wrote ${path.relative(process.cwd(), target)}`);
    } catch (err) {
      failed.push(fixture.path);
      log(`FAILED ${fixture.path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return failed;
}

/** `--hashes DIR`: the SHA-256 of each fixture as written from the copy in DIR (to update the values above). */
function printHashes(dir) {
  for (const fixture of FIXTURES) {
    const value = JSON.parse(fs.readFileSync(path.join(dir, fixture.path), 'utf8'));
    console.log(`${sha256(serialize(value))}  ${fixture.path}`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--hashes') {
    printHashes(path.resolve(process.argv[3] ?? path.join(ROOT, '../shared/fixtures')));
  } else {
    const failed = await fetchFixtures({
      base: process.env.FIXTURES_BASE_URL || undefined,
      dir: process.env.FIXTURES_DIR ? path.resolve(process.env.FIXTURES_DIR) : undefined,
    });
    if (failed.length > 0) {
      console.error(`${failed.length} of ${FIXTURES.length} fixtures not written: ${failed.join(', ')}`);
      process.exit(1);
    }
    console.log(`${FIXTURES.length} fixtures written`);
  }
}
