/**
 * Request generators for the fuzz test. Every generator yields a FuzzRequest: what to send (method, url, headers,
 * payload) and what the oracle needs to predict the answer (is it clean, is its token good, which scenario it is about,
 * what the body was built to be).
 *
 * Placeholders the runner fills in from state at send time (so that generated requests reach real resources):
 * `{{CURSOR}}` (the last nextCursor a list answered), `{{EXECUTION_ID}}` (the last executionId an execute answered),
 * and the If-Match header when `ifMatch` is set.
 */
import fc from 'fast-check';
import type { Api, Operation } from './openapi.js';
import { SchemaArbitraries, type Schema } from './schema-arb.js';
import { first } from '../elements.js';

type IfMatchKind = 'current' | 'stale' | 'star' | 'weak' | 'list' | 'garbage';

export interface FuzzRequest {
  /** The generator family, for the summary. */
  kind: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** The URL, headers and payload encode the generated values exactly: the oracle may predict the status. */
  clean: boolean;
  /** The Authorization header carries the token in a form the service documents as accepted. */
  authOk: boolean;
  /** The token holds one project only (tenancy): the oracle does not predict the status, the invariants still hold. */
  limited?: boolean;
  /** The scenario the request reads, writes or executes. */
  target?: string;
  ifMatch?: IfMatchKind;
  /** Garbage If-Match value (ifMatch 'garbage'). */
  ifMatchValue?: string;
  /** Bodies built to pass the engine's rules too (create, patch), or an execute with a labelled address. */
  semantic?: 'create' | 'patch' | 'execute';
  /** For semantic execute: whether the address is one the service must accept. */
  addressOk?: boolean;
}

export interface GeneratorContext {
  api: Api;
  arbs: SchemaArbitraries;
  token: string;
  /** A token that holds only `project` (API_TOKENS token:project). */
  projectToken?: { token: string; project: string };
  /** Scenario ids most requests use, so that they meet existing scenarios. */
  pool: readonly string[];
}

// ---------------------------------------------------------------------------------------------------------------
// Encoding

/** encodeURIComponent, or undefined for strings it cannot encode (lone surrogates). */
function encode(value: string): string | undefined {
  try {
    return encodeURIComponent(value);
  } catch {
    return undefined;
  }
}

const asText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? 'undefined');

/** Path segment for a value: exact when possible (clean), else lossy. Dot segments are never clean: URLs normalise them. */
export function segment(v: unknown): { text: string; clean: boolean } {
  const s = asText(v);
  const e = encode(s);
  if (e === undefined) return { text: encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd')), clean: false };
  return { text: e, clean: s !== '.' && s !== '..' && s !== '' };
}

function queryString(pairs: [string, unknown][]): { text: string; clean: boolean } {
  let clean = true;
  const parts = pairs.map(([k, v]) => {
    const key = segment(k);
    const value = segment(v);
    if (!key.clean || (!value.clean && asText(v) !== '' && asText(v) !== '.' && asText(v) !== '..')) clean = false;
    return `${key.text}=${value.text}`;
  });
  return { text: parts.length ? `?${parts.join('&')}` : '', clean };
}

// ---------------------------------------------------------------------------------------------------------------
// Authorization

interface AuthChoice {
  header?: string;
  ok: boolean;
  /** The project-limited token. */
  limited?: boolean;
}

const authArbs = new Map<string, fc.Arbitrary<AuthChoice>>();

/**
 * Mostly the operator token (in the forms the service accepts), sometimes the project-limited one, sometimes wrong,
 * missing, malformed or huge.
 */
function authArb(token: string, projectToken?: string): fc.Arbitrary<AuthChoice> {
  const key = `${token} ${projectToken}`;
  let arb = authArbs.get(key);
  if (!arb) authArbs.set(key, (arb = buildAuthArb(token, projectToken)));
  return arb;
}

function buildAuthArb(token: string, projectToken?: string): fc.Arbitrary<AuthChoice> {
  const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 64 });
  return fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom(`Bearer ${token}`, `bearer ${token}`, `BEARER  ${token}`).map((header) => ({ header, ok: true })) },
    ...(projectToken ? [{ weight: 4, arbitrary: fc.constant({ header: `Bearer ${projectToken}`, ok: true, limited: true }) }] : []),
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        undefined, '', 'Bearer', 'Bearer ', `Bearer ${token}x`, `Bearer ${token.slice(1)}`, `Basic ${token}`, token,
        `Bearer ${token} ${token}`, `Bearer\t${token}`, `Bearer ${token},Bearer x`, `Token ${token}`, `Bearer "${token}"`,
        `Bearer ${token.toUpperCase()}`, `Bearer=${token}`, `${token} Bearer`,
      ).map((header) => ({ header, ok: false })),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 70_000 }).map((n) => ({ header: `Bearer ${'A'.repeat(n)}`, ok: false })) },
    { weight: 1, arbitrary: printable.map((s) => ({ header: s, ok: false })) },
  );
}

const auth = (ctx: GeneratorContext) => authArb(ctx.token, ctx.projectToken?.token);

function withAuth(headers: Record<string, string>, auth: AuthChoice): Record<string, string> {
  return auth.header === undefined ? headers : { ...headers, authorization: auth.header };
}

// ---------------------------------------------------------------------------------------------------------------
// Scenario content that passes the engine's rules (see src/engine/validate.ts and DOMAIN.md's query language)

type ScenarioTypes = ['ChallengeQuery', 'OnChainZKP', 'OffChainZKP'];
/**
 * Types the rule-valid generators build. The zero-knowledge types' rules depend on configuration (a JSON-LD context
 * per credential type, ZKP_CONTEXTS) and on which circuits exist; their scenarios come from the schema-driven
 * families, whose status the oracle does not pin down.
 */
const SEMANTIC_TYPES = ['ChallengeQuery'] as const;
/**
 * Credential types with attributes create accepts: those of the contexts the service holds (IDInformation,
 * KYCAgeCredential), and any attribute of a type whose context it does not hold (ProofOfResidence).
 */
const UNHELD_TYPE = 'ProofOfResidence';
const TYPED_ATTRIBUTES: ReadonlyArray<readonly [string, string]> = [
  ['IDInformation', 'reviewAnswer'], ['IDInformation', 'personalData.age'], ['IDInformation', 'personalData.citizenship'],
  ['IDInformation', 'personalData.birthDate'], ['KYCAgeCredential', 'birthday'], ['KYCAgeCredential', 'documentType'],
  [UNHELD_TYPE, 'a.b.c'], [UNHELD_TYPE, 'x'],
];

const isoDate = fc.date({ min: new Date('1950-01-01T00:00:00Z'), max: new Date('2090-01-01T00:00:00Z'), noInvalidDate: true })
  .chain((d) => fc.constantFrom(d.toISOString(), d.toISOString().slice(0, 10)));
const finite = fc.oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.double({ noNaN: true, noDefaultInfinity: true }))
  .map((n) => (Object.is(n, -0) ? 0 : n));
const shortString = fc.string({ maxLength: 16 });
const stringOrNumber = fc.oneof(shortString, finite);

/** A query valid for the scenario type (zero-knowledge types: no $lte/$gte, at most 64 $in values; requestId set later). */
function ruleQuery(type: ScenarioTypes[number], attributeArb: fc.Arbitrary<readonly [string, string]>) {
  const zkp = type !== 'ChallengeQuery';
  const ops = ['$noop', '$eq', '$ne', '$lt', '$gt', '$in', '$nin', '$exists', '$between', '$nonbetween', ...(zkp ? [] : ['$lte', '$gte'])];
  return fc.tuple(fc.constantFrom(...ops), attributeArb, fc.option(fc.nat({ max: 4294967295 }), { nil: undefined }))
    .chain(([operator, [credType, attribute], requestId]) => {
      let value: fc.Arbitrary<unknown>;
      switch (operator) {
        case '$noop': value = fc.constant(undefined); break;
        case '$eq': case '$ne': value = fc.oneof(shortString, finite, fc.boolean(), fc.array(stringOrNumber, { maxLength: 4 })); break;
        case '$lt': case '$gt': case '$lte': case '$gte': value = fc.oneof(finite, isoDate); break;
        case '$in': case '$nin': value = fc.oneof(
          { weight: 8, arbitrary: fc.array(stringOrNumber, { minLength: 1, maxLength: 6 }) },
          { weight: 1, arbitrary: fc.array(stringOrNumber, { minLength: 64, maxLength: 64 }) },
        ); break;
        case '$exists': value = fc.boolean(); break;
        default: value = fc.oneof(
          fc.tuple(finite, finite).map(([a, b]) => (a <= b ? [a, b] : [b, a])),
          fc.tuple(isoDate, isoDate).map(([a, b]) => (Date.parse(a) <= Date.parse(b) ? [a, b] : [b, a])),
        );
      }
      return value.map((v) => ({
        type: credType,
        ...(requestId !== undefined && { requestId }),
        ...(operator !== '$noop' && { attribute }),
        ...(v !== undefined && { value: v }),
        operator,
      }));
    });
}

const qcCache = new WeakMap<GeneratorContext, Map<string, fc.Arbitrary<{ id: string; query: Record<string, unknown> }[]>>>();

/** Query configurations valid for the type, with unique ids and (for every type) unique requestIds. */
function ruleQueryConfigurations(ctx: GeneratorContext, type: ScenarioTypes[number]) {
  let byType = qcCache.get(ctx);
  if (!byType) qcCache.set(ctx, (byType = new Map()));
  let arb = byType.get(type);
  if (!arb) byType.set(type, (arb = buildRuleQueryConfigurations(ctx, type)));
  return arb;
}

function buildRuleQueryConfigurations(ctx: GeneratorContext, type: ScenarioTypes[number]) {
  const attributeSchema = (ctx.api.component('Query').properties as { attribute: Schema }).attribute;
  const attributeArb = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...TYPED_ATTRIBUTES) },
    { weight: 1, arbitrary: (ctx.arbs.valid(attributeSchema) as fc.Arbitrary<string>).map((a) => [UNHELD_TYPE, a] as const) },
  );
  const idSchema = (ctx.api.component('QueryConfiguration').properties as { id: Schema }).id;
  return fc.array(fc.tuple(ctx.arbs.valid(idSchema) as fc.Arbitrary<string>, ruleQuery(type, attributeArb)), { maxLength: 4 })
    .map((list) => {
      const seenIds = new Set<string>();
      return list.map(([id, query], i) => {
        const unique = seenIds.has(id) ? `q-${i}` : id;
        seenIds.add(unique);
        // requestIds: unique per scenario; set for every type so that the list stays valid under a type change.
        return { id: unique, query: { ...query, requestId: 1000 + i } };
      }).filter((qc, i, all) => all.findIndex((o) => o.id === qc.id) === i);
    });
}

/**
 * Deployments the life-cycle rules (src/domain/deployments.ts) accept whatever was stored before: fresh ids (a new
 * deployment may start in any status), statuses that need no address or txHash, transactions that name their own
 * deployment, a txHash that is a transaction hash (0x and 64 hex digits) where there is one, and no multiRequest (the
 * service's to write: a create or PATCH that sets one is refused).
 */
function ruleValidDeployments(ctx: GeneratorContext): fc.Arbitrary<Record<string, unknown>[]> {
  const deployment = ctx.arbs.valid(ctx.api.component('SmartContractDeployment')) as fc.Arbitrary<Record<string, unknown>>;
  return fc.array(
    fc.tuple(deployment, fc.uuid(), fc.constantFrom('DeploymentStarted', 'DeploymentFailed', undefined), fc.constantFrom('TxPosted', 'TxFailed', undefined)),
    { maxLength: 2 },
  ).map((list) => list.map(([d, uuid, status, txStatus]) => {
    const id = `dep-${uuid}`;
    const { address: _address, status: _status, transactions, multiRequest: _multiRequest, ...rest } = d;
    return {
      ...rest,
      id,
      ...(status !== undefined && { status }),
      ...(Array.isArray(transactions) && {
        transactions: (transactions as Record<string, unknown>[]).map((t, j) => {
          const { status: _s, smartContractDeploymentId: _d, ...tx } = t;
          const hex = uuid.replace(/-/g, '').repeat(2).slice(0, 62);
          if (typeof tx.txHash === 'string') tx.txHash = `0x${hex}${j.toString(16).padStart(2, '0')}`;
          return { ...tx, id: `${id}-tx-${j}`, smartContractDeploymentId: id, ...(txStatus !== undefined && { status: txStatus }) };
        }),
      }),
    };
  }));
}

function ruleValidScenario(ctx: GeneratorContext): fc.Arbitrary<Record<string, unknown>> {
  const base = ctx.arbs.valid(ctx.api.component('Scenario')) as fc.Arbitrary<Record<string, unknown>>;
  return fc.tuple(base, fc.constantFrom(...SEMANTIC_TYPES), ruleValidDeployments(ctx)).chain(([scenario, type, smartContractDeployments]) =>
    ruleQueryConfigurations(ctx, type).map((queryConfigurations) => ({ ...withoutWebhookUrl(scenario), type, queryConfigurations, smartContractDeployments })));
}

/**
 * The fuzzed service has no WEBHOOK_SECRET, where a scenario's webhookUrl is refused (test/webhooks.test.ts checks
 * that): a rule-valid scenario or patch has none, or null.
 */
function withoutWebhookUrl(input: Record<string, unknown>): Record<string, unknown> {
  if (input.webhookUrl === undefined || input.webhookUrl === null) return input;
  const { webhookUrl: _dropped, ...rest } = input;
  return rest;
}

/** A merge patch whose result passes the rules whatever scenario it lands on (type only ever changes with queries). */
function ruleValidPatch(ctx: GeneratorContext): fc.Arbitrary<Record<string, unknown>> {
  const base = ctx.arbs.valid(ctx.api.component('ScenarioPatch')) as fc.Arbitrary<Record<string, unknown>>;
  const required = ['name', 'queryConfigurations', 'smartContractDeployments', 'type'];
  return fc.tuple(base, fc.constantFrom('neither', 'both'), fc.constantFrom(...SEMANTIC_TYPES), fc.option(ruleValidDeployments(ctx), { nil: undefined }))
    .chain(([patch, change, type, deployments]) => {
      const p: Record<string, unknown> = { ...withoutWebhookUrl(patch) };
      for (const k of required) if (p[k] === null) delete p[k];
      delete p.smartContractDeployments;
      if (deployments !== undefined) p.smartContractDeployments = deployments;
      delete p.type;
      delete p.queryConfigurations;
      if (change === 'neither') return fc.constant(p);
      // Queries only ever change with the type, so that the result is valid whatever type was stored.
      return ruleQueryConfigurations(ctx, type).map((queryConfigurations) => ({ ...p, queryConfigurations, type }));
    });
}

// ---------------------------------------------------------------------------------------------------------------
// Execute inputs

const ADDRESSES_OK: unknown[] = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0x52908400098527886E0F7030069857D2E4169EE7',
  'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb',
  'KT1PWx2mnDueood7fEmfbBDKx1D9BAnnXitn',
  '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY',
  'addr1vx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzers66hrl8',
  '0x1',
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chain: 'eip155:1' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', namespace: 'eip155' },
  { address: 'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb', chain: 'tezos:NetXdQprcVkpaWU' },
];
const ADDRESSES_BAD: unknown[] = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', // checksum broken
  ' 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  'hello',
  '0x',
  'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcj0',
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', namespace: 'tezos' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chain: 'tezos:NetXdQprcVkpaWU', namespace: 'eip155' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chain: 'eip155' },
];

const lowerEvm = fc.stringMatching(/^[0-9a-f]{40}$/).map((h) => `0x${h}`);

const instant = fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2090-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());

/** Credentials shaped like the issuers' (IDInformation), with subject values that do and do not satisfy the rules. */
const credentialArb = fc.record({
  id: fc.uuid().map((u) => `urn:uuid:${u}`),
  '@context': fc.constant(['https://www.w3.org/2018/credentials/v1']),
  type: fc.constantFrom(['VerifiableCredential', 'IDInformation'], ['VerifiableCredential', 'KYCAgeCredential'], ['IDInformation']),
  issuanceDate: instant,
  expirationDate: instant,
  credentialSubject: fc.record({
    id: fc.constant('did:iden3:polygon:amoy:x6x5sor7zpycB7z7Q9348dXJxZ9s5b9AgmPeSccZz'),
    reviewAnswer: fc.constantFrom('GREEN', 'RED', 1, null, ['GREEN']),
    personalData: fc.record({
      age: fc.oneof(fc.integer({ min: -5, max: 130 }), fc.constantFrom<unknown>('30', null, 17.5)),
      citizenship: fc.constantFrom('FRA', 'DEU', '', 42),
      birthDate: fc.oneof(fc.integer({ min: 19000101, max: 20301231 }), isoDate),
    }, { requiredKeys: [] }),
    a: fc.jsonValue({ maxDepth: 3 }),
  }, { requiredKeys: ['id'] }),
  credentialStatus: fc.record({
    id: fc.constantFrom('https://issuer.example/status/1', 'urn:status:1'),
    type: fc.constantFrom('SparseMerkleTreeProof', 'Iden3ReverseSparseMerkleTreeProof', 'Iden3commRevocationStatusV1.0', 'Iden3OnchainSparseMerkleTreeProof2023'),
    revocationNonce: fc.nat(),
  }),
  issuer: fc.constant('did:iden3:polygon:amoy:xBdqiqz3yVT79NEAuNaqKSDZ6a5V6q8Ph66i5d2tT'),
  credentialSchema: fc.constant({ id: 'https://schemas.example/IDInformation.json', type: 'JsonSchema2023' }),
  proof: fc.constantFrom<unknown>({ type: 'BJJSignature2021' }, [{ type: 'BJJSignature2021' }, { type: 'Iden3SparseMerkleTreeProof' }], {}, []),
});

// ---------------------------------------------------------------------------------------------------------------
// Families

const JSON_CT = 'application/json';

function idArb(ctx: GeneratorContext): fc.Arbitrary<string> {
  const idSchema = ctx.api.op('GET', '/compliance/scenarios/{scenarioId}').parameters.find((p) => p.name === 'scenarioId')!.schema;
  return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...ctx.pool) }, { weight: 2, arbitrary: ctx.arbs.valid(idSchema) as fc.Arbitrary<string> });
}

/** The operation's URL with every path parameter set to `id`; dot ids are not clean (URLs normalise them away). */
function urlFor(op: Operation, id: string): { url: string; clean: boolean } {
  const seg = segment(id);
  return { url: op.path.replace(/\{[^}]+\}/g, seg.text), clean: seg.clean || !op.path.includes('{') };
}

function jsonRequest(kind: string, method: string, url: string, body: unknown, auth: AuthChoice, extra: Partial<FuzzRequest> = {}, contentType = JSON_CT): FuzzRequest {
  return {
    kind, method, url, headers: withAuth({ 'content-type': contentType }, auth), payload: JSON.stringify(body),
    clean: true, authOk: auth.ok, limited: auth.limited, ...extra,
  };
}

/** POST /compliance/scenarios with a scenario that passes the schema and the rules. */
export function createRequests(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  const idChoice = fc.oneof({ weight: 4, arbitrary: idArb(ctx) }, { weight: 1, arbitrary: fc.constant(undefined) });
  return fc.tuple(idChoice, ruleValidScenario(ctx), auth(ctx), fc.boolean()).map(([id, scenario, auth, own]) => {
    // The project token mostly creates in its own project.
    const input = auth.limited && own && ctx.projectToken ? { ...scenario, projectId: ctx.projectToken.project } : scenario;
    return jsonRequest('create', 'POST', '/compliance/scenarios', id === undefined ? { input } : { id, input }, auth, { target: id, semantic: 'create' });
  });
}

const garbageIfMatch = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.constantFrom('"', '""', '"1.1', 'W/', ',', ' , ', '**', '"*"', 'W/"*"', '"1.1" "2.2"', 'x'.repeat(1024), 'x'.repeat(1025)),
  fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => `"${a}.${b}"`),
);

function ifMatchArb(): fc.Arbitrary<{ kind?: IfMatchKind; value?: string }> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant({}) },
    { weight: 4, arbitrary: fc.constantFrom<IfMatchKind>('current', 'stale', 'star', 'weak', 'list').map((kind) => ({ kind })) },
    { weight: 2, arbitrary: garbageIfMatch.map((value) => ({ kind: 'garbage' as const, value })) },
  );
}

/** PATCH with a merge patch that keeps the scenario valid, and every kind of If-Match. */
export function patchRequests(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(idArb(ctx), ruleValidPatch(ctx), ifMatchArb(), fc.constantFrom(JSON_CT, 'application/merge-patch+json'), auth(ctx))
    .map(([id, patch, ifMatch, ct, auth]) => {
      const seg = segment(id);
      return jsonRequest('patch', 'PATCH', `/compliance/scenarios/${seg.text}`, { input: patch }, auth, {
        target: id, semantic: 'patch', ifMatch: ifMatch.kind, ifMatchValue: ifMatch.value, clean: seg.clean,
      }, ct);
    });
}

/** Execute against pool scenarios with labelled addresses and issuer-shaped or schema-made credentials. */
export function executeRequests(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  const address = fc.oneof(
    { weight: 6, arbitrary: fc.oneof(fc.constantFrom(...ADDRESSES_OK), lowerEvm).map((a) => ({ a, ok: true })) },
    { weight: 1, arbitrary: fc.constantFrom(...ADDRESSES_BAD).map((a) => ({ a, ok: false })) },
  );
  const credential = fc.oneof(
    { weight: 3, arbitrary: credentialArb as fc.Arbitrary<unknown> },
    { weight: 1, arbitrary: ctx.arbs.valid(ctx.api.component('Credential')) },
  );
  return fc.tuple(idArb(ctx), address, fc.array(credential, { maxLength: 4 }), auth(ctx)).map(([scenarioId, addr, credentials, auth]) =>
    jsonRequest('execute', 'POST', '/compliance/scenarios/execute', { address: addr.a, credentials, scenarioId }, auth, {
      target: scenarioId, semantic: 'execute', addressOk: addr.ok,
    }));
}

/**
 * Any documented operation, its parts generated from its schemas: all valid, or one part (a path or query parameter,
 * a header, the body) mutated, or an unknown query parameter added.
 */
export function operationRequests(ctx: GeneratorContext, mode: 'valid' | 'mutant'): fc.Arbitrary<FuzzRequest> {
  // One arbitrary per operation, built once: building fast-check arbitraries costs more than drawing from them.
  return fc.oneof(...ctx.api.operations.map((op) => operationRequest(ctx, op, mode)));
}

function paramValue(ctx: GeneratorContext, op: Operation, name: string, schema: Schema, mutate: boolean): fc.Arbitrary<unknown> {
  if (mutate) return ctx.arbs.mutant(schema);
  if (name === 'scenarioId') return idArb(ctx);
  if (name === 'executionId') return fc.oneof({ weight: 3, arbitrary: fc.constant('{{EXECUTION_ID}}') }, { weight: 1, arbitrary: fc.uuid() }, { weight: 1, arbitrary: ctx.arbs.valid(schema) });
  // A few keys come back often, so that retries (replays) and reuse with another body (422) happen.
  if (name.toLowerCase() === 'idempotency-key') return fc.oneof({ weight: 2, arbitrary: fc.constantFrom('fz-key-1', 'fz-key-2', 'fz-key-3') }, { weight: 1, arbitrary: ctx.arbs.valid(schema) });
  if (name === 'cursor') return fc.oneof({ weight: 3, arbitrary: fc.constant('{{CURSOR}}') }, { weight: 1, arbitrary: ctx.arbs.valid(schema) });
  return ctx.arbs.valid(schema);
}

function operationRequest(ctx: GeneratorContext, op: Operation, mode: 'valid' | 'mutant'): fc.Arbitrary<FuzzRequest> {
  const path = op.parameters.filter((p) => p.in === 'path');
  const query = op.parameters.filter((p) => p.in === 'query');
  const headers = op.parameters.filter((p) => p.in === 'header');
  const contentTypes = Object.keys(op.body ?? {});
  type Part = { part: 'path' | 'query' | 'header' | 'body' | 'unknown-query' | 'none'; name?: string };
  const parts: Part[] = mode === 'valid'
    ? [{ part: 'none' }]
    : [
        ...op.parameters.map((p) => ({ part: p.in, name: p.name }) as Part),
        ...(contentTypes.length ? [{ part: 'body' } as Part, { part: 'body' } as Part] : []),
        { part: 'unknown-query' },
      ];
  return fc.oneof(...parts.map((mutated) => {
    const pathArb = fc.tuple(...path.map((p) => paramValue(ctx, op, p.name, p.schema, mutated.part === 'path' && mutated.name === p.name)));
    const queryArb = fc.tuple(...query.map((p) => {
      const mutate = mutated.part === 'query' && mutated.name === p.name;
      const v = paramValue(ctx, op, p.name, p.schema, mutate);
      return p.required && !('default' in p.schema) ? v : fc.option(v, { nil: undefined, freq: mutate ? 10 : 2 });
    }));
    const headerArb = fc.tuple(...headers.map((p) => {
      const mutate = mutated.part === 'header' && mutated.name === p.name;
      if (p.name.toLowerCase() === 'if-match' && !mutate) return ifMatchArb() as fc.Arbitrary<unknown>;
      return fc.option(paramValue(ctx, op, p.name, p.schema, mutate), { nil: undefined, freq: mutate ? 10 : 2 });
    }));
    const ctArb = contentTypes.length ? fc.constantFrom(...contentTypes) : fc.constant(undefined);
    const extraQuery = mutated.part === 'unknown-query'
      ? fc.tuple(fc.constantFrom('extra', 'limit ', 'Limit', '__proto__', 'constructor', 'scenarioId'), fc.string({ maxLength: 8 })).map((kv) => [kv])
      : fc.constant([] as [string, string][]);
    return fc.tuple(pathArb, queryArb, headerArb, ctArb, extraQuery, auth(ctx)).chain(([pv, qv, hv, ct, extra, auth]) => {
      const bodyArb: fc.Arbitrary<unknown> = ct === undefined
        ? fc.constant(undefined)
        : mutated.part === 'body' ? ctx.arbs.mutant(op.body![ct]!) : ctx.arbs.valid(op.body![ct]!);
      return bodyArb.map((body): FuzzRequest => {
        let clean = true;
        let url = op.path;
        let target: string | undefined;
        path.forEach((p, i) => {
          const seg = pv[i] === '{{EXECUTION_ID}}' ? { text: '{{EXECUTION_ID}}', clean: true } : segment(pv[i]);
          clean &&= seg.clean;
          url = url.replace(`{${p.name}}`, seg.text);
          if (p.name === 'scenarioId' && typeof pv[i] === 'string') target = pv[i] as string;
        });
        const pairs: [string, unknown][] = [];
        query.forEach((p, i) => {
          const v = qv[i];
          if (v === undefined) return;
          if (Array.isArray(v)) for (const x of v) pairs.push([p.name, x]);
          else pairs.push([p.name, v]);
        });
        pairs.push(...extra);
        const qs = queryString(pairs);
        clean &&= qs.clean;
        url += qs.text.replace(/%7B%7BCURSOR%7D%7D/g, '{{CURSOR}}');
        const h: Record<string, string> = {};
        let ifMatch: IfMatchKind | undefined;
        let ifMatchValue: string | undefined;
        headers.forEach((p, i) => {
          const v = hv[i];
          if (v === undefined) return;
          if (p.name.toLowerCase() === 'if-match' && typeof v === 'object' && v !== null && !Array.isArray(v)) {
            const choice = v as { kind?: IfMatchKind; value?: string };
            ifMatch = choice.kind;
            ifMatchValue = choice.value;
            return;
          }
          const text = asText(v);
          // Header values must be latin1 without control characters; others cannot be sent.
          h[p.name.toLowerCase()] = /^[\t\x20-\x7e\x80-\xff]*$/.test(text) ? text : segment(text).text;
        });
        if (ct !== undefined) h['content-type'] = ct;
        return {
          kind: `${mode}:${op.operationId ?? `${op.method} ${op.path}`}`,
          method: op.method,
          url,
          headers: withAuth(h, auth),
          ...(body !== undefined && { payload: JSON.stringify(body) }),
          clean,
          authOk: auth.ok,
          limited: auth.limited,
          target,
          ifMatch,
          ifMatchValue,
        };
      });
    });
  }));
}

/** Arbitrary JSON documents sent to every operation that takes a body (and some that do not). */
export function arbitraryJsonRequests(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(fc.constantFrom(...ctx.api.operations), fc.jsonValue({ maxDepth: 4 }), idArb(ctx), auth(ctx))
    .map(([op, body, id, auth]) => {
      const { url, clean } = urlFor(op, id);
      return jsonRequest('arbitrary-json', op.method, url, body, auth, { target: id, clean });
    });
}

const CONTENT_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json-patch+json',
  'application/merge-patch+json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'Application/Merge-Patch+Json', 'application/jsonx',
  'application/json;', ' application/json', 'application/*', '*/*', '', 'application/json, text/plain', 'application/problem+json',
  'application/json; charset=latin1', 'application/json;charset="utf-8"', 'text/json', 'application/octet-stream', 'json',
];

/** Valid bodies with other content types. */
export function contentTypeRequests(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  const withBody = ctx.api.operations.filter((o) => o.body);
  return fc.tuple(fc.constantFrom(...withBody), fc.constantFrom(...CONTENT_TYPES), idArb(ctx), auth(ctx)).chain(([op, ct, id, auth]) =>
    ctx.arbs.valid(first(Object.values(op.body!))).map((body) => {
      const { url, clean } = urlFor(op, id);
      return jsonRequest('content-type', op.method, url, body, auth, { target: id, clean }, ct);
    }));
}

/** Broken JSON: truncated, spliced, BOM, comments, NaN, deep nesting, prototype keys, huge numbers, duplicate keys. */
export function brokenJsonRequests(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  const withBody = ctx.api.operations.filter((o) => o.body);
  const breakers = fc.oneof(
    fc.tuple(fc.nat(), fc.constant('cut')),
    fc.tuple(fc.nat(), fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', '\u0000', 'NaN', 'undefined', "'", '/*x*/', '//\n', '\ud800', '\ufeff', '1e999', '-', '.')),
  );
  const special = fc.constantFrom(
    '', ' ', 'null', '0', '"x"', '[]', '{}', 'true', '\ufeff{}', '{"input":{}}', '{"input":null}',
    '{"__proto__":{"isAdmin":true}}', '{"input":{"__proto__":{"x":1}}}', '{"constructor":{"prototype":{"x":1}}}',
    '{"scenarioId":"a","scenarioId":"b"}', '{"a":1e999}', '{"a":-1e999}', '{"a":"\\ud800"}', '{"a":"\\u0000"}',
    '['.repeat(5000) + ']'.repeat(5000), '{"a":'.repeat(3000) + '1' + '}'.repeat(3000), '[' + '1,'.repeat(20000) + '1]',
    `{"input":${'{"name":'.repeat(200)}"x"${'}'.repeat(200)}}`,
  );
  return fc.tuple(fc.constantFrom(...withBody), idArb(ctx), auth(ctx), fc.oneof(breakers, fc.constant(null)), special)
    .chain(([op, id, auth, breaker, sp]) => ctx.arbs.valid(first(Object.values(op.body!))).map((body) => {
      let payload = JSON.stringify(body);
      if (breaker === null) payload = sp;
      else {
        const at = breaker[0] % (payload.length + 1);
        payload = breaker[1] === 'cut' ? payload.slice(0, at) : payload.slice(0, at) + breaker[1] + payload.slice(at);
      }
      const { url, clean } = urlFor(op, id);
      return {
        kind: 'broken-json', method: op.method, url,
        headers: withAuth({ 'content-type': first(Object.keys(op.body!)) }, auth), payload, clean, authOk: auth.ok, limited: auth.limited, target: id,
      };
    }));
}

/** Bodies over BODY_LIMIT (the runner's app keeps the default 1 MiB). */
export function oversizeRequests(ctx: GeneratorContext, bodyLimit: number): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(fc.constantFrom(...ctx.api.operations.filter((o) => o.body)), fc.integer({ min: bodyLimit + 1, max: bodyLimit + 4096 }), auth(ctx), idArb(ctx))
    .map(([op, size, auth, id]) => {
      const head = '{"input":{"name":"';
      const payload = `${head}${'x'.repeat(size - head.length - 4)}"}}`;
      const { url, clean } = urlFor(op, id);
      return {
        kind: 'oversize', method: op.method, url,
        headers: withAuth({ 'content-type': first(Object.keys(op.body!)) }, auth), payload, clean, authOk: auth.ok, limited: auth.limited, target: id,
      };
    });
}

const SEGMENTS = [
  'compliance', 'scenarios', 'execute', 'executions', 'health', 'live', 'ready', 'docs', 'json', 'static', '', '.', '..', '%2e', '%2E%2E',
  '%2F', '%00', '%', '%zz', '%C3%A9', '%c3', '%E2%80%AE', ';', ';a=b', '*', '~', '%20', '+', 'a'.repeat(101), 'a'.repeat(129), 'x'.repeat(3000),
  'adult-kyc', 'fz-0', ':id', '{scenarioId}', '%7BscenarioId%7D', '..%2F..%2Fetc%2Fpasswd', 'compliance%2Fscenarios',
];
const QUERIES = [
  '', '?', '??', '?&', '?&&&', '?limit', '?limit=', '?limit=1&limit=2', '?limit=%', '?limit=%zz', '?limit=1e1', '?limit=0x10', '?limit=+5',
  '?limit=5.0', '?limit= 5', '?limit=-0', '?limit=00000000000000000000001', '?cursor[]=x', '?cursor=', '?cursor=%00', '?__proto__=1',
  '?constructor[prototype]=1', `?a=${'b'.repeat(5000)}`, '?limit=1#frag', '#frag', '?cursor=czE', '?cursor=czk5OTk5OTk5OTk5OTk5OTk', '?a=%E2%80%AE',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Odd paths and query strings, any method: they must meet a problem (or a documented answer), never a 5xx. */
export function oddPathRequests(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  const path = fc.oneof(
    fc.array(fc.constantFrom(...SEGMENTS), { minLength: 0, maxLength: 5 }).map((s) => `/${s.join('/')}`),
    fc.constantFrom(...ctx.api.operations.map((o) => o.path)).chain((p) =>
      fc.constantFrom(...SEGMENTS).map((s) => p.replace(/\{[^}]+\}/g, s))),
    fc.constantFrom(...ctx.api.operations.map((o) => o.path)).map((p) => p.replace(/\{[^}]+\}/g, 'fz-0')).chain((p) =>
      fc.constantFrom(`${p}/`, `/${p}`, p.toUpperCase(), p.replace('/compliance', '/compliance/'), `${p}/.`, `${p}/..`, `${p}%2F`, `${p};x`)),
  );
  return fc.tuple(path, fc.constantFrom(...QUERIES), fc.constantFrom(...METHODS), auth(ctx), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }))
    .map(([p, q, method, auth, body]) => ({
      kind: 'odd-path', method, url: p + q,
      headers: withAuth(body === undefined ? {} : { 'content-type': JSON_CT }, auth),
      ...(body !== undefined && method !== 'GET' && method !== 'HEAD' && { payload: JSON.stringify(body) }),
      clean: false, authOk: auth.ok, limited: auth.limited,
    }));
}

/** Odd headers on valid requests: x-request-id garbage, content-length lies, accept, duplicated authorization forms. */
export function oddHeaderRequests(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  const latin1 = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 200 });
  const header = fc.oneof(
    fc.tuple(fc.constant('x-request-id'), fc.oneof(latin1, fc.constantFrom('', 'ok-id', 'a'.repeat(128), 'a'.repeat(129), 'x\r\nSet-Cookie: a=b'.replace(/[\r\n]/g, ' ')))),
    fc.tuple(fc.constantFrom('accept', 'accept-encoding', 'accept-language', 'origin', 'cookie', 'x-forwarded-for', 'if-none-match', 'if-modified-since', 'range', 'expect', 'accept-version', 'if-match'), latin1),
    fc.tuple(fc.constant('content-length'), fc.constantFrom('0', '1', '-1', 'abc', '99999999999')),
  );
  return fc.tuple(fc.oneof(operationRequests(ctx, 'valid'), createRequests(ctx), executeRequests(ctx)), fc.array(header, { minLength: 1, maxLength: 3 }))
    .map(([req, extra]) => {
      const headers = { ...req.headers };
      for (const [k, v] of extra) headers[k] = v;
      return { ...req, kind: 'odd-header', headers, clean: false, ifMatch: 'if-match' in headers ? undefined : req.ifMatch };
    });
}
