/**
 * The compiled merklizer (src/trust/merklize-compiled.ts) against @iden3/js-jsonld-merklization 1.7.2's
 * Merklizer.merklizeJSONLD and js-sdk's findCredentialType: the same root and type on every held credential type
 * (random values of each datatype, fields left out, arrays, nested objects), on the real-world credentials, and no
 * answer (the library runs) wherever the library fails or the plan does not cover the document; the core claim
 * computed through it is the issuer's own (real-world proofs) or js-sdk's toCoreClaim.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Merklizer } from '@iden3/js-jsonld-merklization';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDocumentLoader } from '../../src/jsonld/documents.js';
import { claimFromHex, findCredentialType, VerifiableConstants } from '../../src/trust/iden3.js';
import { clearCompiledPlans, compiledMerklize, simpleContext } from '../../src/trust/merklize-compiled.js';
import { installFastPoseidon } from '../../src/trust/poseidon.js';
import { computeCoreClaim } from '../../src/trust/proof-check.js';
import { W3CCredential } from './iden3-test.js';

type Doc = Record<string, unknown>;
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));
const REALWORLD = '../shared/fixtures/realworld';
const documents = {
  ...(readJson('../shared/fixtures/iden3/jsonld-and-json-schemas.json') as Doc),
  ...(readJson(`${REALWORLD}/jsonld-documents.json`) as Doc),
};
const loader = createDocumentLoader({ documents });
const W3C = 'https://www.w3.org/2018/credentials/v1';
const IDEN3 = 'https://schema.iden3.io/core/jsonld/iden3proofs.jsonld';

beforeAll(() => installFastPoseidon()); // both sides hash through the same js-crypto object

/** What the library answers: root and credential type, or the error. */
async function library(doc: Doc): Promise<string> {
  try {
    const mz = await Merklizer.merklizeJSONLD(JSON.stringify(doc), { documentLoader: loader as never });
    return `root ${(await mz.root()).bigInt()} type ${findCredentialType(mz)}`;
  } catch {
    return 'error';
  }
}
async function compiled(doc: Doc): Promise<string> {
  const c = await compiledMerklize(doc, loader);
  return c === undefined ? 'error' : `root ${c.root} type ${c.credentialType}`;
}
/** Equal answers; and the compiled one never answers where the library fails. */
async function same(doc: Doc): Promise<string> {
  const [l, c] = [await library(doc), await compiled(doc)];
  expect(c).toBe(l);
  return l;
}

// ---- the held credential types: every type with a scoped context in the held documents

interface TermDef {
  '@id'?: string;
  '@type'?: string;
  '@context'?: Record<string, unknown>;
}
interface HeldType {
  url: string;
  type: string;
  terms: Record<string, unknown>;
}
const heldTypes: HeldType[] = [];
const held = { ...documents, [VerifiableConstants.AUTH.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD_URL]: JSON.parse(VerifiableConstants.AUTH.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD) as unknown };
held['https://compliance.example/schemas/IDInformation-v1.jsonld'] = readJson('src/jsonld/documents/IDInformation-v1.jsonld.json');
for (const [url, doc] of Object.entries(held)) {
  const ctx = (doc as Doc)['@context'];
  if (!url.includes(':') || ctx === undefined) continue;
  for (const part of [ctx].flat()) {
    if (typeof part !== 'object' || part === null) continue;
    for (const [type, def] of Object.entries(part as Doc)) {
      const scoped = (def as TermDef | null)?.['@context'];
      if (scoped !== undefined) heldTypes.push({ url, type, terms: scoped });
    }
  }
}

const XSD = 'xsd:';
const grapheme = fc.string({ unit: 'grapheme', maxLength: 24 });
const tricky = fc.constantFrom('', 'a"b', 'back\\slash', 'line\nbreak\r', 'tab\t', 'ünïcödé 🎉', ' lead', '1.5', 'true');
/** Mostly valid values of the type, now and then one the library refuses (both must refuse it). */
const mostly = (valid: fc.Arbitrary<unknown>, invalid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 30, arbitrary: valid }, { weight: 1, arbitrary: invalid });
const dateTime = mostly(
  fc.oneof(
    fc.date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
    fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    fc.constantFrom('2024-01-12T15:30:40.800436+02:00', '2361-03-21T21:14:48+02:00'),
  ),
  fc.constant('not a date'),
);
function valueOf(type: string | undefined): fc.Arbitrary<unknown> {
  const t = type?.replace('http://www.w3.org/2001/XMLSchema#', XSD);
  switch (t) {
    case `${XSD}integer`:
      return mostly(fc.oneof(fc.integer(), fc.integer().map(String), fc.maxSafeInteger(), fc.constantFrom(0, -1, 1e21)), fc.constantFrom('1'.repeat(80), 'x'));
    case `${XSD}positiveInteger`:
    case `${XSD}nonNegativeInteger`:
      return mostly(fc.oneof(fc.integer({ min: 1, max: 2 ** 40 }).map(String), fc.integer({ min: 1, max: 2 ** 40 })), fc.constantFrom(-1, '-5'));
    case `${XSD}boolean`:
      return mostly(fc.oneof(fc.boolean(), fc.constantFrom('true', '0')), fc.constant('yes'));
    case `${XSD}double`:
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constantFrom(0.1, -0, 1e-7, 12.5, '3.25'));
    case `${XSD}dateTime`:
      return dateTime;
    default:
      return fc.oneof(grapheme, tricky, fc.integer(), fc.boolean());
  }
}

/** A credentialSubject of the type: each field optional, sometimes an array, nested objects from nested contexts. */
function subjectOf(terms: Record<string, unknown>, depth = 0): fc.Arbitrary<Doc> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [term, def] of Object.entries(terms)) {
    if (term.startsWith('@') || term === 'id' || term === 'type' || typeof def !== 'object' || def === null) continue;
    const d = def as TermDef;
    const one = d['@context'] !== undefined && depth < 2 ? subjectOf(d['@context'], depth + 1) : valueOf(d['@type']);
    fields[term] = fc.oneof({ weight: 4, arbitrary: one }, { weight: 1, arbitrary: fc.array(one, { minLength: 1, maxLength: 3 }) });
  }
  return fc.record(fields, { requiredKeys: [] });
}

const ISSUER = 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa';
// Now and then the issuer itself: its node then has two parents, which the library refuses.
const did = mostly(fc.constantFrom('did:polygonid:polygon:mumbai:2qH2mPVRN7ZDCnEofjeh8Qd2Uo3YsEhTVhKhjB8xs4', 'did:example:holder'), fc.constant(ISSUER));
function credentialOf(t: HeldType): fc.Arbitrary<Doc> {
  return fc
    .record(
      {
        id: fc.uuid().map((u) => `urn:uuid:${u}`),
        subjectId: did,
        subject: subjectOf(t.terms),
        expirationDate: dateTime,
        status: fc.oneof(
          fc.record({ id: fc.webUrl(), revocationNonce: fc.nat(), type: fc.constantFrom('SparseMerkleTreeProof', 'Iden3commRevocationStatusV1.0') }),
          fc.record({ id: fc.webUrl(), revocationNonce: fc.nat(), type: fc.constant('Iden3ReverseSparseMerkleTreeProof'), statusIssuer: fc.record({ id: fc.webUrl(), revocationNonce: fc.nat(), type: fc.constant('SparseMerkleTreeProof') }) }),
        ),
        typeOnSubject: mostly(fc.constant(true), fc.constant(false)),
      },
      { requiredKeys: ['subject', 'status', 'typeOnSubject'] },
    )
    .map((r) => ({
      ...(r.id === undefined ? {} : { id: r.id }),
      '@context': [W3C, IDEN3, t.url],
      type: ['VerifiableCredential', t.type],
      ...(r.expirationDate === undefined ? {} : { expirationDate: r.expirationDate }),
      issuanceDate: '2024-01-12T15:30:40.800436+02:00',
      credentialSubject: { ...r.subject, ...(r.subjectId === undefined ? {} : { id: r.subjectId }), ...(r.typeOnSubject ? { type: t.type } : {}) },
      credentialStatus: r.status,
      issuer: ISSUER,
      credentialSchema: { id: 'https://example.com/schema.json', type: 'JsonSchema2023' },
    }));
}

describe('the subset of JSON-LD the plan follows', () => {
  it('holds every context the service bundles and every held issuer context (so their credentials keep the fast path)', async () => {
    const bundled = createDocumentLoader({});
    const urls = [W3C, IDEN3, VerifiableConstants.AUTH.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD_URL, 'https://compliance.example/schemas/IDInformation-v1.jsonld'];
    const contexts = [...(await Promise.all(urls.map(async (u) => (await bundled(u)).document as Doc))), ...Object.values(held).map((d) => d as Doc)];
    let checked = 0;
    for (const doc of contexts) {
      if (doc['@context'] === undefined) continue; // a JSON schema
      expect(simpleContext(doc['@context'])).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('leaves out what real contexts do not use', () => {
    const t = (def: unknown) => ({ '@version': 1.1, T: { '@id': 'https://e.example/#T', '@context': { k: def } } });
    for (const def of [{ '@reverse': 'https://e.example/#k' }, { '@id': 'https://e.example/#k', '@type': '@json' }, { '@id': 'https://e.example/#k', '@context': null }, { '@id': 'https://e.example/#k', '@language': 'en' }, '@id', '@type', { '@id': '@type' }]) {
      expect(simpleContext(t(def))).toBe(false);
    }
    expect(simpleContext({ '@import': 'https://e.example/ctx' })).toBe(false);
    expect(simpleContext({ '@base': 'https://e.example/' })).toBe(false);
    expect(simpleContext({ '@vocab': null })).toBe(false);
    expect(simpleContext(t({ '@id': 'https://e.example/#k', '@type': 'http://www.w3.org/2001/XMLSchema#integer' }))).toBe(true);
  });
});

describe('the compiled merklizer on the held credential types', () => {
  it('finds the held types (IDInformation, AuthBJJCredential, the KYC and real-world ones)', () => {
    const names = heldTypes.map((t) => t.type);
    for (const n of ['IDInformation', 'AuthBJJCredential', 'KYCAgeCredential', 'KYCEmployee', 'operators', 'testNewType', 'DeliveryAddress']) expect(names).toContain(n);
    expect(heldTypes.length).toBeGreaterThanOrEqual(19);
  });

  it('answers as the library does for random credentials of every held type', async () => {
    let answered = 0;
    for (const t of heldTypes) {
      await fc.assert(
        fc.asyncProperty(credentialOf(t), async (doc) => {
          if ((await same(doc)) !== 'error') answered++;
        }),
        { numRuns: 6 },
      );
    }
    // Most draws are merklized by both: the comparison is not only of refusals.
    expect(answered).toBeGreaterThan(heldTypes.length * 2);
  });

  it('answers as the library does for many IDInformation credentials (arrays, nested personalData, blank nodes)', async () => {
    const t = heldTypes.find((h) => h.type === 'IDInformation') as HeldType;
    await fc.assert(
      fc.asyncProperty(credentialOf(t), async (doc) => {
        await same(doc);
      }),
      { numRuns: 40 },
    );
  });
});

// ---- real-world credentials: the same root as the library, and the issuer's own core claim

const realworld = readdirSync(`${REALWORLD}/credentials`).map((f) => readJson(`${REALWORLD}/credentials/${f}`) as Doc);
const unsigned = (c: Doc): Doc => Object.fromEntries(Object.entries(c).filter(([k]) => k !== 'proof'));
const bjjClaim = (c: Doc): string => ([c.proof].flat() as Doc[]).find((p) => p.type === 'BJJSignature2021')?.coreClaim as string;

async function claimHex(doc: Doc, signed: string): Promise<string> {
  const claim = claimFromHex(signed);
  const opts = {
    revNonce: claim.getRevocationNonce(),
    version: claim.getVersion(),
    subjectPosition: claim.getIdPosition(),
    merklizedRootPosition: claim.getMerklizedPosition(),
    updatable: claim.getFlagUpdatable(),
  };
  return (await computeCoreClaim(doc, opts, loader)).hex();
}

describe('the compiled merklizer on the real-world credentials', () => {
  it('gives each the library root and type, and the core claim its issuer signed', async () => {
    expect(realworld.length).toBe(6);
    for (const c of realworld) {
      expect(await same(unsigned(c))).toMatch(/^root /);
      expect(await compiledMerklize(unsigned(c), loader)).toBeDefined();
      expect(await claimHex(unsigned(c), bjjClaim(c))).toBe(bjjClaim(c));
    }
  });

  it('a value given twice counts as jsonld counts it (once when equal as JSON, twice when only equal as RDF)', async () => {
    const c = unsigned(realworld[0] as Doc);
    const cs = c.credentialSubject as Doc;
    for (const birthday of [[19960424, 19960424], [19960424, '19960424'], [1, 1.0, '1']]) {
      expect(await same({ ...c, credentialSubject: { ...cs, birthday } })).toMatch(/^root /);
      expect(await compiledMerklize({ ...c, credentialSubject: { ...cs, birthday } }, loader)).toBeDefined();
    }
  });

  it('changed values change the root as they change the library root', async () => {
    const c = unsigned(realworld[0] as Doc);
    const changed = { ...c, credentialSubject: { ...(c.credentialSubject as Doc), birthday: 19960425 } };
    expect(await same(changed)).not.toBe(await same(c));
  });
});

// ---- what the plan does not cover: no answer, the library's result through computeCoreClaim

const idInfo = readJson('src/trust/documents/warmup-credential.json') as Doc;
const base = unsigned(idInfo);
const subject = base.credentialSubject as Doc;
const sdkClaim = async (doc: Doc, opts: Doc): Promise<string> => {
  try {
    return (await W3CCredential.fromJSON(doc).toCoreClaim({ ...opts, merklizeOpts: { documentLoader: loader } })).hex();
  } catch {
    return 'error';
  }
};
const oursClaim = async (doc: Doc, opts: Doc): Promise<string> => {
  try {
    return (await computeCoreClaim(doc, { revNonce: 1n, version: 0, subjectPosition: 1, merklizedRootPosition: 1, updatable: false, ...opts }, loader)).hex();
  } catch {
    return 'error';
  }
};
const claimOpts = { revNonce: 1n, version: 0, subjectPosition: 'index', merklizedRootPosition: 'index', updatable: false };

const uncovered: Array<[string, Doc]> = [
  ['a term the context does not define', { ...base, credentialSubject: { ...subject, notInTheContext: 'x' } }],
  ['a nested @context', { ...base, credentialSubject: { ...subject, '@context': { extra: 'https://e.example/extra' }, extra: 'x' } }],
  ['a value object', { ...base, credentialSubject: { ...subject, reviewAnswer: { '@value': 'GREEN' } } }],
  ['a language-tagged value', { ...base, credentialSubject: { ...subject, reviewAnswer: { '@value': 'GREEN', '@language': 'en' } } }],
  ['an @list', { ...base, credentialSubject: { ...subject, documentType: { '@list': ['A', 'B'] } } }],
  ['two keys for @id', { ...base, credentialSubject: { ...subject, '@id': 'did:example:other' } }],
  ['two keys for @type', { ...base, credentialSubject: { ...subject, '@type': 'IDInformation' } }],
  ['a blank node id', { ...base, credentialSubject: { ...subject, id: '_:holder' } }],
  ['a relative id', { ...base, id: 'relative/credential' }],
  ['an empty nested object', { ...base, credentialSubject: { ...subject, personalData: {} } }],
  ['two credential subjects', { ...base, credentialSubject: [subject, { ...subject, id: 'did:example:other' }] }],
  ['a credentialSubject with two types', { ...base, credentialSubject: { ...subject, type: ['IDInformation', 'VerifiableCredential'] } }],
  ['no @context', Object.fromEntries(Object.entries(base).filter(([k]) => k !== '@context'))],
  ['an integer out of the field', { ...base, credentialSubject: { ...subject, personalData: { age: '9'.repeat(90) } } }],
  ['an unparsable date', { ...base, issuanceDate: 'yesterday' }],
];

describe('what the compiled plan does not cover', () => {
  it.each(uncovered)('%s: no compiled answer, and the core claim is js-sdk\'s (or both refuse)', async (_name, doc) => {
    expect(await compiledMerklize(doc, loader)).toBeUndefined();
    expect(await oursClaim(doc, {})).toBe(await sdkClaim(doc, claimOpts));
  });

  it('a non-merklized type (AuthBJJCredential, kyc-nonmerklized) is computed by the library: the slots are js-sdk\'s', async () => {
    const auth = {
      id: 'urn:uuid:5f1b2c1e-0000-4000-8000-000000000001',
      '@context': [W3C, IDEN3, VerifiableConstants.AUTH.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD_URL],
      type: ['VerifiableCredential', 'AuthBJJCredential'],
      issuanceDate: '2024-01-12T15:30:40Z',
      credentialSubject: { type: 'AuthBJJCredential', x: '123', y: '456' },
      credentialStatus: { id: 'https://status.example/1', revocationNonce: 1, type: 'SparseMerkleTreeProof' },
      issuer: 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa',
      credentialSchema: { id: 'https://example.com/auth.json', type: 'JsonSchema2023' },
    };
    const none = { ...claimOpts, merklizedRootPosition: '' };
    const sdk = await sdkClaim(auth, none);
    expect(sdk).not.toBe('error');
    expect(await oursClaim(auth, { merklizedRootPosition: 0 })).toBe(sdk);
  });

  it('property-scoped contexts inside type-scoped ones, a term defined differently in each: the library root', async () => {
    const url = 'https://own.example/nested.jsonld';
    const v = (iri: string) => ({ v: { '@id': iri, '@type': 'http://www.w3.org/2001/XMLSchema#string' } });
    const context = {
      '@context': {
        '@version': 1.1,
        id: '@id',
        type: '@type',
        K: { '@id': 'https://own.example/#K', '@context': v('https://own.example/#outer') },
        T: { '@id': 'https://own.example/#T', '@context': { K: { '@id': 'https://own.example/#K', '@context': v('https://own.example/#inner') } } },
      },
    };
    const own = createDocumentLoader({ documents: { [url]: context } });
    const subjects = [
      { type: 'T', K: { v: 'a', K: { v: 'b', K: [{ v: 'c' }, { v: 'd', type: 'T', K: { v: 'e' } }] } } },
      { K: { v: 'a' }, type: 'T' },
      { K: [{ v: 'x' }, { K: { v: 'y' } }] },
    ];
    for (const credentialSubject of subjects) {
      const doc = { '@context': [W3C, url], type: ['VerifiableCredential', 'T'], issuanceDate: '2024-01-12T15:30:40Z', credentialSubject };
      const mz = await Merklizer.merklizeJSONLD(JSON.stringify(doc), { documentLoader: own as never });
      const ours = await compiledMerklize(doc, own);
      expect(ours?.root).toBe((await mz.root()).bigInt());
      expect(ours?.credentialType).toBe(findCredentialType(mz));
    }
  });

  it('a changed context document is compiled again, not answered from the old plan', async () => {
    const url = 'https://own.example/ctx.jsonld';
    const ctx = (iri: string) => ({ '@context': [{ '@version': 1.1, '@protected': true, id: '@id', type: '@type', T: { '@id': 'https://own.example/#T', '@context': { v: { '@id': iri, '@type': 'http://www.w3.org/2001/XMLSchema#string' } } } }] });
    const doc = { '@context': [W3C, url], type: ['VerifiableCredential', 'T'], issuanceDate: '2024-01-12T15:30:40Z', credentialSubject: { type: 'T', v: 'x' } };
    const first = createDocumentLoader({ documents: { [url]: ctx('https://own.example/#v1') } });
    const second = createDocumentLoader({ documents: { [url]: ctx('https://own.example/#v2') } });
    clearCompiledPlans();
    const expected = async (l: typeof first) => (await (await Merklizer.merklizeJSONLD(JSON.stringify(doc), { documentLoader: l as never })).root()).bigInt();
    expect((await compiledMerklize(doc, first))?.root).toBe(await expected(first));
    expect((await compiledMerklize(doc, second))?.root).toBe(await expected(second));
    expect(await expected(first)).not.toBe(await expected(second));
    // Both at once, the plan compiling with one loader while the other asks: each gets its own root, or no answer.
    clearCompiledPlans();
    for (let i = 0; i < 3; i++) {
      const [a, b] = await Promise.all([compiledMerklize(doc, first), compiledMerklize(doc, second)]);
      for (const [got, l] of [[a, first], [b, second]] as const) if (got !== undefined) expect(got.root).toBe(await expected(l));
    }
  });
});
