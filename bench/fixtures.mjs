import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Bench fixtures. The engine benchmark: one 5-rule ChallengeQuery scenario of mixed operators (string $eq,
 * number $gte, string $nin, number $between, ISO date $lt) over three credential types, and three valid credentials
 * (one per type) padded with an iden3-like BJJSignature2021 proof (an execute body of about 4 KB); every rule passes.
 * The HTTP and memory benchmarks: see HTTP_RULES below.
 */

export const TOKEN = 'bench-token-0123456789abcdef0123';
/** EIP-55 mixed case, as wallets and frontends send it (so the checksum is verified on every execute). */
export const ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

export const RULES = [
  { id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
  { id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gte' } },
  { id: 'q-country', query: { type: 'IDInformation', requestId: 3, attribute: 'personalData.citizenship', value: ['PRK', 'IRN', 'SYR', 'CUB'], operator: '$nin' } },
  { id: 'q-risk', query: { type: 'AMLCheck', requestId: 4, attribute: 'riskScore', value: [0, 40], operator: '$between' } },
  { id: 'q-residence', query: { type: 'ProofOfResidence', requestId: 5, attribute: 'residentSince', value: '2025-01-01', operator: '$lt' } },
];

export function scenario(name = 'Bench KYC', rules = RULES) {
  return {
    name,
    description: 'Benchmark scenario: 5 rules of mixed operators over 3 credential types',
    type: 'ChallengeQuery',
    queryConfigurations: rules,
    smartContractDeployments: [],
  };
}

const hex = (seed, length) => {
  let out = '';
  let x = seed >>> 0;
  while (out.length < length) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, length);
};

const ISSUER = 'did:iden3:polygon:amoy:xBdqiqz3yVT79NEAuNaqKSDZ6a5V6q8Ph66i5d2tT';

export function credential(n, type, subject, dates = {}) {
  return {
    id: `urn:uuid:4d3c2b1a-0000-4000-8000-00000000000${n}`,
    '@context': [
      'https://www.w3.org/2018/credentials/v1',
      'https://schema.iden3.io/core/jsonld/iden3proofs.jsonld',
      `https://schemas.example/${type}.jsonld`,
    ],
    type: ['VerifiableCredential', type],
    issuanceDate: dates.issuanceDate ?? '2025-01-01T00:00:00Z',
    expirationDate: dates.expirationDate ?? '2035-01-01T00:00:00Z',
    credentialSubject: { id: 'did:iden3:polygon:amoy:x6x5sor7zpyZX9yNpm8h1rPBDSN9idaEhDj1Qm8Q9', type, ...subject },
    credentialStatus: {
      id: `https://issuer.example/v1/agent/credentials/status/${n}`,
      type: 'Iden3commRevocationStatusV1.0',
      revocationNonce: 1000 + n,
    },
    issuer: ISSUER,
    credentialSchema: { id: `https://schemas.example/${type}.json`, type: 'JsonSchema2023' },
    proof: [{
      type: 'BJJSignature2021',
      issuerData: {
        id: ISSUER,
        state: { value: hex(n * 7 + 2, 64) },
      },
      coreClaim: hex(n * 7 + 4, 192),
      signature: hex(n * 7 + 5, 128),
    }],
  };
}

/** Three valid credentials, one per type the rules read; every rule passes on them. */
export function credentials() {
  return [
    credential(1, 'IDInformation', { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA', firstName: 'Ada', lastName: 'Lovelace' } }),
    credential(2, 'AMLCheck', { riskScore: 12, provider: 'example-aml', checkedAt: '2025-06-01T10:00:00Z' }),
    credential(3, 'ProofOfResidence', { residentSince: '2019-05-20', country: 'FRA', postalCode: '75001' }),
  ];
}

export function executeBody(scenarioId, creds = credentials()) {
  return { address: ADDRESS, scenarioId, credentials: creds };
}

// -----------------------------------------------------------------------------------------------------------------
// The HTTP and memory benchmarks run execute as production does: credential trust verification (strict, the
// default since the trust work) before the rules. Their credentials are real IDInformation credentials (BJJSignature2021
// proofs, SparseMerkleTreeProof status) issued by the service's deterministic demo issuer for ADDRESS, which the
// server trusts and answers statuses for in process with DEMO_ISSUER=1. Their rules read IDInformation claims only
// (the demo issuer's JSON-LD context); operators are mixed as above.
// -----------------------------------------------------------------------------------------------------------------

export const HTTP_RULES = [
  ...RULES.slice(0, 3), // q-kyc, q-age, q-country: IDInformation already
  { id: 'q-birth', query: { type: 'IDInformation', requestId: 4, attribute: 'personalData.birthDate', value: [19000101, 20080101], operator: '$between' } },
  { id: 'q-entry', query: { type: 'IDInformation', requestId: 5, attribute: 'entryTime', value: '2026-01-01T00:00:00Z', operator: '$lt' } },
];

export const httpScenario = (name = 'Bench execute') => scenario(name, HTTP_RULES);

/** Claims of the three IDInformation credentials; every rule passes on each. */
export const ID_CLAIMS = [
  { reviewAnswer: 'GREEN', documentType: 'PASSPORT', entryTime: '2025-06-01T10:00:00Z', personalData: { firstName: 'Ada', lastName: 'Lovelace', age: 30, citizenship: 'FRA', birthDate: 19950101 } },
  { reviewAnswer: 'GREEN', documentType: 'ID_CARD', entryTime: '2025-03-12T08:30:00Z', personalData: { firstName: 'Ada', lastName: 'Lovelace', age: 30, citizenship: 'GBR', birthDate: 19950101 } },
  { reviewAnswer: 'GREEN', documentType: 'RESIDENCE_PERMIT', entryTime: '2024-11-02T16:45:00Z', personalData: { firstName: 'Ada', lastName: 'Lovelace', age: 30, citizenship: 'FRA', birthDate: 19950101 } },
];

/** Three IDInformation credentials with made-up proofs: for CREDENTIAL_VERIFICATION=off. */
export function syntheticIdCredentials() {
  return ID_CLAIMS.map((claims, i) => credential(i + 1, 'IDInformation', { id: `did:pkh:eip155:1:${ADDRESS}`, ...claims }));
}

/** Three IDInformation credentials issued for ADDRESS by the demo issuer in dist/ (about 2.8 KB each). */
export async function demoIdCredentials() {
  const { createDemoIssuer } = await import('../dist/trust/demo-issuer.js');
  const issuer = await createDemoIssuer({ statusUrl: 'http://127.0.0.1:3000/demo-issuer/status' });
  const now = Date.now();
  const out = [];
  for (const claims of ID_CLAIMS) {
    out.push(await issuer.issue({
      subjectId: `did:pkh:eip155:1:${ADDRESS}`,
      claims,
      issuanceDate: new Date(now - 3_600_000),
      expirationDate: new Date(now + 365 * 86_400_000),
    }));
  }
  return { issuer: issuer.did, credentials: out };
}

// -----------------------------------------------------------------------------------------------------------------
// Fresh genuine credentials: the cold rounds (bench/http.mjs `cold`, bench/engine.mjs's cold verification) send
// credentials the server (or verifier) has never seen, so each must be issued. The demo issuer takes ~450 ms of CPU per
// credential (js-sdk's BabyJubJub signature and Poseidon merklization in JavaScript), too slow to issue a thousand
// at every run: freshIdCredentials issues them in parallel with node:worker_threads (bench/issue-worker.mjs) and keeps
// them in a file under the OS temp dir (never in the repository), keyed by the demo issuer's DID and what issuing
// depends on (dist/trust/demo-issuer.js, the IDInformation context and schema in dist/jsonld/documents/, the js-sdk
// version). Credential #i of a cache is always the same (its claims are freshClaims(i)), so a later run that needs
// more issues only the missing ones. Each process (a bench server, the engine benchmark) sees each credential once: reusing them across runs
// is fine, since every run starts a new server and new verifiers.
// -----------------------------------------------------------------------------------------------------------------

const here = path.dirname(fileURLToPath(import.meta.url));
const FRESH_FORMAT = 2; // bump when freshClaims or freshIssueRequest change
/** The demo issuer's status URL base in every bench credential (the server answers the demo issuer's statuses in process). */
export const DEMO_STATUS_URL = 'http://127.0.0.1:3000/demo-issuer/status';

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Radia', 'Frances', 'John', 'Sophie', 'Leslie', 'Hedy', 'Niklaus', 'Katherine', 'Dennis'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Thompson', 'Perlman', 'Allen', 'McCarthy', 'Wilson', 'Lamport', 'Lamarr', 'Wirth', 'Johnson', 'Ritchie', 'Kay', 'Backus'];
const DOCUMENT_TYPES = ['PASSPORT', 'ID_CARD', 'RESIDENCE_PERMIT', 'DRIVERS_LICENSE'];
const CITIZENSHIPS = ['FRA', 'GBR', 'DEU', 'ITA', 'ESP', 'NLD', 'CHE', 'JPN', 'CAN', 'BRA'];

/**
 * Claims of fresh credential #i: every HTTP_RULES rule passes (GREEN, age >= 18, citizenship not sanctioned, birth date
 * in 1900-2008, entry time before 2026), and no two indices give the same content (entryTime is one minute per index
 * from 2020-01-01, so unique below ~3 million; names, document type, citizenship and age vary too).
 */
export function freshClaims(i) {
  const age = 18 + (i % 60);
  return {
    reviewAnswer: 'GREEN',
    documentType: DOCUMENT_TYPES[i % DOCUMENT_TYPES.length],
    entryTime: new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString().replace('.000Z', 'Z'),
    personalData: {
      firstName: `${FIRST_NAMES[i % FIRST_NAMES.length]}${Math.floor(i / FIRST_NAMES.length)}`,
      lastName: LAST_NAMES[i % LAST_NAMES.length],
      age,
      citizenship: CITIZENSHIPS[i % CITIZENSHIPS.length],
      birthDate: (2025 - age) * 10000 + 101 + (i % 12) * 100 + (i % 28),
    },
  };
}

/**
 * The demo issuer's issue() request of fresh credential #i. `dates` are those of the cache (epoch ms); credential #i is
 * issued i seconds before the cache's issuance date and expires i seconds after its expiration date, so that its dates
 * are its own too (a verifier that remembers hashes of common values gets no help from them).
 */
export function freshIssueRequest(i, dates) {
  return {
    subjectId: `did:pkh:eip155:1:${ADDRESS}`,
    claims: freshClaims(i),
    issuanceDate: new Date(dates.issuanceDate - i * 1000),
    expirationDate: new Date(dates.expirationDate + i * 1000),
  };
}

function fileDigest(hash, file) {
  try {
    hash.update(file).update('\u0000').update(fs.readFileSync(file)).update('\u0000');
  } catch {
    hash.update(file).update('\u0000(missing)\u0000');
  }
}

/** The cache key: the demo issuer's DID and what issuing depends on in this checkout. */
function freshCacheKey(did) {
  const hash = createHash('sha256').update(`format ${FRESH_FORMAT}\u0000${did}\u0000`);
  const dist = path.resolve(here, '../dist/trust');
  fileDigest(hash, path.join(dist, 'demo-issuer.js'));
  try {
    // The IDInformation context and schema the demo issuer issues with (other files there do not change what it issues).
    const documents = path.resolve(here, '../dist/jsonld/documents');
    for (const f of fs.readdirSync(documents).sort()) {
      if (f.startsWith('IDInformation')) fileDigest(hash, path.join(documents, f));
    }
  } catch {
    hash.update('(no documents)');
  }
  fileDigest(hash, path.resolve(here, '../node_modules/@0xpolygonid/js-sdk/package.json'));
  return hash.digest('hex');
}

const DAY = 86_400_000;

/**
 * Fresh credentials #offset .. #offset+n-1 of the cache: IDInformation credentials for ADDRESS issued by the demo
 * issuer, each with content of its own, every HTTP_RULES rule passing on each. Issues what the cache lacks, in
 * parallel (BENCH_ISSUE_THREADS worker threads, default one per CPU), and saves the cache. Answers
 * { issuer, credentials, cached, issued, issueMs, issueCpuMsPerCredential, threads, file }.
 * BENCH_FRESH_CACHE=0 neither reads nor writes the file (everything issued now).
 */
export async function freshIdCredentials(n, { offset = 0, log = (m) => console.error(m) } = {}) {
  const { createDemoIssuer } = await import('../dist/trust/demo-issuer.js');
  const did = (await createDemoIssuer({ statusUrl: DEMO_STATUS_URL })).did;
  const key = freshCacheKey(did);
  const dir = path.join(os.tmpdir(), 'scs-bench-credentials');
  const file = path.join(dir, `fresh-${key.slice(0, 24)}.json`);
  const useCache = process.env.BENCH_FRESH_CACHE !== '0';
  const now = Date.now();
  let cache;
  if (useCache) {
    try {
      const c = JSON.parse(fs.readFileSync(file, 'utf8'));
      // Still valid for 30 days (the rules and the verifier check the dates), issued in the past, for this issuer.
      if (c.format === FRESH_FORMAT && c.key === key && c.did === did && c.expirationDate - now > 30 * DAY && c.issuanceDate < now &&
        Array.isArray(c.credentials) && c.credentials.every((x) => x && x.issuer === did && Array.isArray(x.proof))) cache = c;
    } catch {
      // none yet, or unreadable: start a new one
    }
  }
  // The dates of a whole cache: issued an hour before it was started, valid for a year.
  cache ??= { format: FRESH_FORMAT, key, did, issuanceDate: now - 3_600_000, expirationDate: now + 365 * DAY, credentials: [] };
  const want = offset + n;
  const missing = [];
  for (let i = cache.credentials.length; i < want; i++) missing.push(i);
  const cached = Math.max(0, Math.min(cache.credentials.length, want) - offset);
  let issueMs = 0;
  let cpuMs = 0;
  let threads = 0;
  if (missing.length > 0) {
    const { Worker } = await import('node:worker_threads');
    // A thread loads the iden3 libraries first (~1 s of CPU): one per 4 credentials at most.
    threads = Math.max(1, Math.min(Number(process.env.BENCH_ISSUE_THREADS) || os.availableParallelism(), Math.ceil(missing.length / 4)));
    log(`  issuing ${missing.length} fresh demo credentials (#${missing[0]}..#${missing.at(-1)}) with ${threads} worker thread(s), ~0.5 s of CPU each${useCache ? `; kept in ${file} for later runs` : ''}`);
    const started = performance.now();
    const cpu0 = process.cpuUsage(); // the whole process: this thread (idle) and the workers
    const results = new Array(missing.length);
    let done = 0;
    let lastLog = started;
    await Promise.all(Array.from({ length: threads }, (_, t) => new Promise((resolve, reject) => {
      const indices = missing.filter((_, k) => k % threads === t);
      const worker = new Worker(path.join(here, 'issue-worker.mjs'), {
        workerData: {
          indices,
          statusUrl: DEMO_STATUS_URL,
          dates: { issuanceDate: cache.issuanceDate, expirationDate: cache.expirationDate },
          // js-sdk loads ffjavascript, which loads the `web-worker` package, which takes any thread for one of its own
          // web workers and runs the script workerData.mod (none: a TypeError in every thread): an empty one. It also
          // listens on parentPort, so the thread does not end by itself: it says when it is done and is terminated.
          mod: 'data:text/javascript,',
          name: 'bench-issue',
        },
      });
      let finished = false;
      worker.on('message', (m) => {
        if (m.done) {
          finished = true;
          worker.terminate();
          return;
        }
        if (m.credential) {
          results[m.i - missing[0]] = m.credential;
          done++;
          if (performance.now() - lastLog > 15_000) {
            lastLog = performance.now();
            log(`  ... ${done} / ${missing.length} issued (${((lastLog - started) / 1000).toFixed(0)} s)`);
          }
        }
      });
      worker.once('error', reject);
      worker.once('exit', (code) => (finished ? resolve() : reject(new Error(`issue worker exited (${code}) before it was done`))));
    })));
    issueMs = performance.now() - started;
    const cpu = process.cpuUsage(cpu0);
    cpuMs = (cpu.user + cpu.system) / 1000;
    for (const c of results) if (!c || c.issuer !== did) throw new Error('an issue worker answered no credential or one of another issuer');
    cache.credentials.push(...results);
    log(`  issued ${missing.length} in ${(issueMs / 1000).toFixed(1)} s (${(cpuMs / missing.length).toFixed(0)} ms of CPU per credential, ${threads} thread(s))`);
    if (useCache) {
      fs.mkdirSync(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(cache));
      fs.renameSync(tmp, file);
    }
  }
  const credentials = cache.credentials.slice(offset, want);
  const ids = new Set(credentials.map((c) => JSON.stringify(c.credentialSubject)));
  if (ids.size !== credentials.length) throw new Error('fresh credentials: two have the same content');
  return { issuer: did, credentials, cached, issued: missing.length, issueMs, issueCpuMsPerCredential: missing.length ? cpuMs / missing.length : NaN, threads, file: useCache ? file : undefined };
}

/**
 * A forged copy of a genuine credential: a new id and one credentialSubject value changed, so that the server has
 * never seen it and its signature no longer matches its content. `forgeTemplate(c)` answers a function k -> JSON text
 * of forged copy #k (the flood sends thousands: a string replace instead of a deep copy each).
 */
export function forgeTemplate(genuine) {
  const c = structuredClone(genuine);
  c.id = 'urn:uuid:FORGED-ID';
  c.credentialSubject.personalData = { ...c.credentialSubject.personalData, firstName: 'FORGED-NAME' };
  const text = JSON.stringify(c);
  const [a, rest] = text.split('urn:uuid:FORGED-ID');
  const [b, d] = rest.split('FORGED-NAME');
  // A tag per template (so that two runs, or two templates, never forge the same content), then k.
  const tag = createHash('sha256').update(`${process.pid} ${Date.now()} ${Math.random()}`).digest('hex');
  return (k) => `${a}urn:uuid:${tag.slice(0, 8)}-${tag.slice(8, 12)}-4${tag.slice(12, 15)}-8${tag.slice(15, 18)}-${(k >>> 0).toString(16).padStart(12, '0')}${b}Mallory-${tag.slice(0, 6)}-${k}${d}`;
}

/** One forged copy (parsed), for the cross-checks. */
export const forged = (genuine, k = 1) => JSON.parse(forgeTemplate(genuine)(k));
