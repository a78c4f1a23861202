/**
 * What the fuzz test expects of an answer. Two layers:
 * - invariants for every request: never a 5xx; a 4xx is problem+json whose `status` is the HTTP status (and a valid
 *   Problem); a 2xx is documented for its route and matches the documented schema; refused requests leave the store
 *   as it was; accepted writes change exactly what they say;
 * - a prediction of the status for clean requests (exact encodings of generated values), from the OpenAPI schemas
 *   (validated by an independent Ajv), the store's state before the request, and the rules the generators followed.
 */
import { isRecord } from '../../src/schemas/json.js';
import { isDeepStrictEqual } from 'node:util';
import type { Api, Operation } from './openapi.js';
import type { FuzzRequest } from './requests.js';

export interface Row {
  seq: number;
  id: string;
  input: unknown;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

export interface Snapshot {
  /** By seq: ids are unique per project only, so one id may name several rows. */
  rows: Map<number, Row>;
  /** A stable text of every row, compared before and after. */
  text: string;
  /** The newest execution recorded for the request's scenario (null when none, undefined when not looked at). */
  newestExecution?: string | null;
}

export interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** What the runner learnt while sending: the ETag current when an If-Match request was made. */
export interface SendContext {
  /** The sent If-Match value, placeholders resolved. */
  ifMatch?: string;
  /** The ETag of the target a GET answered just before (undefined: no such scenario). */
  currentEtag?: string;
  /** The cursor placeholder was replaced by a cursor the service issued. */
  issuedCursor: boolean;
}

export class Violation extends Error {
  constructor(readonly rule: string, message: string) {
    super(`[${rule}] ${message}`);
  }
}

const header = (a: Answer, name: string) => {
  const v = a.headers[name];
  return Array.isArray(v) ? v.join(', ') : v === undefined ? undefined : String(v);
};

const isJsonType = (m: string) => m === 'application/json' || m.endsWith('+json');
const mediaType = (ct: string | undefined) => (ct ?? '').split(';')[0]!.trim().toLowerCase();

const projectOf = (row: Row) => (row.input as { projectId?: string | null }).projectId ?? null;
/** The rows with this id (an operator token sees every project). */
const rowsWithId = (snap: Snapshot, id: unknown): Row[] =>
  typeof id === 'string' ? [...snap.rows.values()].filter((r) => r.id === id) : [];
/** The request's `?projectId=` ('' names the scenarios without a project), when it has one. */
const projectParam = (url: string): string | undefined => {
  const q = decodeParts(url)?.query.projectId;
  return typeof q === 'string' ? q : undefined;
};
/** The one project of the project-limited token (`limited` requests). */
export const LIMITED_PROJECT = 'fz-proj';
/** The rows a request naming this id (and maybe a project) looks at: every project's for the operator token. */
const rowsFor = (snap: Snapshot, id: unknown, project: string | undefined, limited = false): Row[] =>
  rowsWithId(snap, id).filter((r) => (project === undefined || projectOf(r) === (project === '' ? null : project)) &&
    (!limited || projectOf(r) === LIMITED_PROJECT));
/** The one row a request addresses, when there is exactly one. */
const onlyRow = (snap: Snapshot, id: unknown, req: FuzzRequest): Row | undefined => {
  const rows = rowsFor(snap, id, projectParam(req.url), req.limited);
  return rows.length === 1 ? rows[0] : undefined;
};

/** JSON with object keys sorted, to compare request bodies as the idempotency check does. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** RFC 7396. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** RFC 9110 13.1.1: `*`, or a list containing the current strong tag. */
function ifMatchHolds(value: string | undefined, etag: string | undefined): boolean {
  if (value === undefined) return true;
  if (value.trim() === '*') return etag !== undefined;
  return etag !== undefined && value.split(',').map((t) => t.trim()).includes(etag);
}

/** JSON.parse as Fastify's parser (secure-json-parse) does it: a leading BOM is dropped, prototype keys are refused. */
function parseBody(payload: string): { ok: true; value: unknown } | { ok: false } {
  let value: unknown;
  try {
    value = JSON.parse(payload.charCodeAt(0) === 0xfeff ? payload.slice(1) : payload);
  } catch {
    return { ok: false };
  }
  const stack = [value];
  while (stack.length) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (!Array.isArray(node)) {
      if (Object.prototype.hasOwnProperty.call(node, '__proto__')) return { ok: false };
      const c = (node as Record<string, unknown>).constructor;
      if (Object.prototype.hasOwnProperty.call(node, 'constructor') && typeof c === 'object' && c !== null && Object.prototype.hasOwnProperty.call(c, 'prototype')) {
        return { ok: false };
      }
    }
    stack.push(...Object.values(node as object));
  }
  return { ok: true, value };
}

/**
 * Whether a parsed body holds text a database cannot store as sent (U+0000 or an unpaired UTF-16 surrogate, in a
 * string or a key), or `path` names such a field: the routes that store it answer 400.
 */
/** Said otherwise than src/domain/storable-text.ts's regex, so that the oracle can catch a mistake in it. */
const unstorable = (s: string): boolean => s.includes('\u0000') || !(s as string & { isWellFormed(): boolean }).isWellFormed();
function holdsUnstorableText(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (unstorable(node)) return true;
    } else if (typeof node === 'object' && node !== null) {
      if (!Array.isArray(node) && Object.keys(node).some(unstorable)) return true;
      stack.push(...Object.values(node as object));
    }
  }
  return false;
}

/** A decimal literal as a sign, an integer of its digits and a power of ten. */
function decimal(literal: string): { neg: boolean; digits: bigint; exp: number } {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal)!;
  return { neg: m[1] === '-', digits: BigInt(m[2] + (m[3] ?? '')), exp: Number(m[4] ?? 0) - (m[3]?.length ?? 0) };
}

/**
 * Whether a JSON text states a number JSON.parse does not keep (its decimal value differs from the double's, or it is
 * -0 or out of range): the scenario routes answer 400. Compared as exact rationals, independently of the service.
 */
function statesInexactNumber(payload: string): boolean {
  for (const [token] of payload.matchAll(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g)) {
    if (token.startsWith('"')) continue;
    const v = Number(token);
    if (!Number.isFinite(v) || Object.is(v, -0)) return true;
    const a = decimal(token);
    const b = decimal(String(v).replace('e+', 'e'));
    if (a.digits === 0n || b.digits === 0n) {
      if (a.digits !== b.digits) return true;
      continue;
    }
    const m = Math.min(a.exp, b.exp);
    if (a.neg !== b.neg || a.digits * 10n ** BigInt(a.exp - m) !== b.digits * 10n ** BigInt(b.exp - m)) return true;
  }
  return false;
}

function decodeParts(url: string): { path: string; query: Record<string, string | string[]> } | undefined {
  const [rawPath = '', rawQuery = ''] = url.split('#')[0]!.split('?', 2);
  const query: Record<string, string | string[]> = Object.create(null);
  try {
    for (const pair of rawQuery.split('&')) {
      if (pair === '') continue;
      const i = pair.indexOf('=');
      const k = decodeURIComponent(i < 0 ? pair : pair.slice(0, i));
      const v = decodeURIComponent(i < 0 ? '' : pair.slice(i + 1));
      const prev = Object.prototype.hasOwnProperty.call(query, k) ? query[k] : undefined;
      query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
  } catch {
    return undefined;
  }
  return { path: rawPath, query };
}

/**
 * The statuses a clean request may get, or undefined when the oracle cannot tell.
 * `url` has its placeholders resolved.
 */
export function predict(api: Api, req: FuzzRequest, url: string, headers: Record<string, string>, before: Snapshot, sent: SendContext, bodyLimit: number): number[] | undefined {
  if (req.limited) return undefined; // tenancy decides; only the invariants are checked
  const statuses = predictStatuses(api, req, url, headers, before, sent, bodyLimit);
  // A route may set a smaller bodyLimit of its own (the document does not say): big bodies may also be 413.
  if (statuses && req.payload !== undefined && Buffer.byteLength(req.payload) > 64 * 1024 && !statuses.includes(413)) return [...statuses, 413];
  return statuses;
}

function predictStatuses(api: Api, req: FuzzRequest, url: string, headers: Record<string, string>, before: Snapshot, sent: SendContext, bodyLimit: number): number[] | undefined {
  if (!req.clean) return undefined;
  const parts = decodeParts(url);
  if (!parts) return undefined;
  const hit = api.match(req.method, parts.path);
  if (!hit) return [404];
  const { op } = hit;
  if (op.secured && !req.authOk) return [401];

  let body: unknown;
  let bodyCt: string | undefined;
  if (op.body && req.payload !== undefined) {
    bodyCt = mediaType(headers['content-type']);
    if (!(bodyCt in op.body)) return req.payload === '' ? [400, 415] : [415];
    if (Buffer.byteLength(req.payload) > bodyLimit) return [413];
    if (isJsonType(bodyCt)) {
      const parsed = parseBody(req.payload);
      if (!parsed.ok) return [400];
      body = parsed.value;
      // The scenario routes refuse, before anything else, what they could not store as sent.
      if ((op.operationId === 'createScenario' || op.operationId === 'updateScenario') && (holdsUnstorableText(body) || statesInexactNumber(req.payload))) return [400];
    } else {
      body = req.payload; // text bodies reach the route as they are
    }
  } else if (op.body && op.bodyRequired) {
    return [400];
  }

  const params: Record<string, string> = {};
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  try {
    names.forEach((n, i) => { params[n] = decodeURIComponent(hit.params[i]!); });
  } catch {
    return undefined;
  }
  const lowerHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const query = { ...parts.query };
  if (!api.partValidator(op, 'path')(params)) return [400];
  // A fresh parse for the validator (defaults may be filled in); structuredClone would recurse on deep nesting.
  if (op.body && body !== undefined && !api.bodyValidator(op, bodyCt!)(isJsonType(bodyCt!) ? JSON.parse(req.payload!.replace(/^\ufeff/, '')) : body)) return [400];
  if (!api.partValidator(op, 'query')(query)) return [400];
  if (!api.partValidator(op, 'header')(lowerHeaders)) return [400];
  // A ?projectId= that could not reach SQL as sent (U+0000, an unpaired surrogate) is refused naming it.
  const project = projectParam(url);
  if (project !== undefined && unstorable(project)) return [400];

  // Ids are unique per project; the operator token sees every project: one row is found, several are ambiguous (409).
  const found = (id: unknown, yes: number) => {
    const n = rowsFor(before, id, projectParam(url)).length;
    return n === 0 ? 404 : n === 1 ? yes : 409;
  };
  switch (op.operationId) {
    case 'live':
    case 'ready':
      return [200];
    case 'listScenarios':
      return parts.query.cursor === undefined || sent.issuedCursor ? [200] : [200, 400];
    case 'getScenario':
      return [found(params.scenarioId, 200)];
    case 'deleteScenario':
      return [found(params.scenarioId, 204)];
    case 'createScenario': {
      // The rules are checked before the store is asked, so a taken id with broken rules is a 400.
      const { id, input } = body as { id?: string; input?: { projectId?: unknown } };
      const project = input?.projectId ?? null;
      const taken = id !== undefined && rowsWithId(before, id).some((r) => projectOf(r) === project);
      if (req.semantic !== 'create') return taken ? [400, 409] : [201, 400];
      return taken ? [409] : [201];
    }
    case 'updateScenario': {
      const status = found(params.scenarioId, 200);
      if (status !== 200) return [status];
      if (!ifMatchHolds(sent.ifMatch, sent.currentEtag)) return [412];
      // A patch that moves the scenario into a project having its id is a 409.
      const row = onlyRow(before, params.scenarioId, { ...req, url })!;
      const patch = (body as { input?: Record<string, unknown> } | undefined)?.input;
      const target = patch && typeof patch === 'object' && 'projectId' in patch ? (patch.projectId ?? null) : projectOf(row);
      const blocked = target !== projectOf(row) && rowsWithId(before, params.scenarioId).some((r) => projectOf(r) === target);
      if (blocked) return req.semantic === 'patch' ? [409] : [400, 409];
      return req.semantic === 'patch' ? [200] : [200, 400];
    }
    case 'executeScenario': {
      const b = body as { scenarioId: string; credentials: Array<{ id?: unknown }> };
      // A credential id goes into the audit record: one that cannot be stored is a 400, before the scenario is looked up.
      if (b.credentials.some((c) => holdsUnstorableText(c.id))) return [400];
      if (req.semantic === 'execute') {
        if (!req.addressOk) return [400];
        return [found(b.scenarioId, 200)];
      }
      return [400, found(b.scenarioId, 200)];
    }
    default:
      return undefined;
  }
}

const STACK = /\bat .*\.(ts|js|mjs|cjs):\d+|node_modules|\/work\//;

/** The invariants every answer must hold; throws a Violation. */
export function checkAnswer(api: Api, req: FuzzRequest, url: string, a: Answer): { op?: Operation; json?: unknown } {
  const path = url.split('#')[0]!.split('?')[0]!;
  const hit = api.match(req.method, path);
  const s = a.statusCode;
  const ct = header(a, 'content-type');
  if (s >= 500) throw new Violation('no-5xx', `${s} ${a.body.slice(0, 500)}`);
  // The docs UI (HTML, static files, redirects) is outside the OpenAPI document: only its errors are checked.
  const docs = path === '/docs' || path.startsWith('/docs/');
  if (docs && s < 400) return {};
  if (s < 200 || (s >= 300 && s < 400)) throw new Violation('unexpected-status', `${s}`);
  const rid = header(a, 'x-request-id');
  if (!rid || !/^[A-Za-z0-9._:-]{1,128}$/.test(rid)) throw new Violation('request-id', `x-request-id ${JSON.stringify(rid)}`);
  const given = Object.entries(req.headers).find(([k]) => k.toLowerCase() === 'x-request-id')?.[1];
  if (given !== undefined && /^[A-Za-z0-9._:-]{1,128}$/.test(given) && rid !== given) {
    throw new Violation('request-id', `a sane x-request-id ${JSON.stringify(given)} was not honoured (answered ${JSON.stringify(rid)})`);
  }

  if (s >= 400) {
    if (mediaType(ct) !== 'application/problem+json') {
      throw new Violation('problem-json', `${s} with content-type ${ct}: ${a.body.slice(0, 300)}`);
    }
    if (req.method === 'HEAD') return { op: hit?.op };
    let problem: { status?: unknown } & Record<string, unknown>;
    try {
      problem = JSON.parse(a.body);
    } catch {
      throw new Violation('problem-json', `${s} body is not JSON: ${a.body.slice(0, 300)}`);
    }
    if (problem.status !== s) throw new Violation('problem-status', `HTTP ${s} but problem.status ${JSON.stringify(problem.status)}`);
    const v = api.componentValidator('Problem');
    if (!v(problem)) throw new Violation('problem-schema', `${JSON.stringify(v.errors)} in ${a.body.slice(0, 300)}`);
    if (STACK.test(a.body)) throw new Violation('no-stack', a.body.slice(0, 500));
    if (typeof problem.code !== 'string' || !problem.code.startsWith('SCS_')) throw new Violation('problem-code', `no SCS_ code: ${a.body.slice(0, 300)}`);
    // Validation problems name each failing field: a dotted name under its part, and a JSON pointer.
    const errors = problem.errors as { field: string; pointer: string; message: string }[] | undefined;
    if (problem.code === 'SCS_VALIDATION' && (!errors || errors.length === 0)) throw new Violation('validation-fields', `a validation problem without errors: ${a.body.slice(0, 300)}`);
    for (const e of errors ?? []) {
      if (!/^(body|params|querystring|headers)(\.|$)/.test(e.field) || (e.pointer !== '' && !e.pointer.startsWith('/')) || e.message === '') {
        throw new Violation('validation-fields', `field ${JSON.stringify(e)} in ${a.body.slice(0, 300)}`);
      }
    }
    if (s === 401 && !header(a, 'www-authenticate')?.startsWith('Bearer')) throw new Violation('www-authenticate', '401 without WWW-Authenticate: Bearer');
    return { op: hit?.op, json: problem };
  }

  // 2xx
  if (!hit) throw new Violation('2xx-undocumented', `${s} for ${req.method} ${path}, which is no documented operation`);
  const documented = hit.op.responses[String(s)];
  if (!(String(s) in hit.op.responses)) throw new Violation('2xx-undocumented', `${s} is not documented for ${hit.op.method} ${hit.op.path}`);
  if (req.method === 'HEAD') {
    if (a.body !== '') throw new Violation('head-body', 'HEAD answered with a body');
    return { op: hit.op };
  }
  if (!documented) {
    if (a.body !== '') throw new Violation('2xx-shape', `${s} documents no content but the body is ${a.body.slice(0, 200)}`);
    return { op: hit.op };
  }
  const m = mediaType(ct);
  if (!(m in documented)) throw new Violation('2xx-content-type', `${s} with ${ct}; documented: ${Object.keys(documented).join(', ')}`);
  const v = api.responseValidator(hit.op, String(s), m);
  if (m !== 'application/json' && !m.endsWith('+json')) {
    // Text (e.g. Prometheus metrics): the body is the documented string.
    if (!v(a.body)) throw new Violation('2xx-shape', `${JSON.stringify(v.errors)} for a ${m} body`);
    return { op: hit.op };
  }
  let json: unknown;
  try {
    json = JSON.parse(a.body);
  } catch {
    throw new Violation('2xx-shape', `body is not JSON: ${a.body.slice(0, 200)}`);
  }
  if (!v(structuredClone(json))) throw new Violation('2xx-shape', `${JSON.stringify(v.errors)} in ${a.body.slice(0, 400)}`);
  return { op: hit.op, json };
}

/** Refused requests and reads leave the store as it was; accepted writes change exactly their scenario. */
export function checkState(op: Operation | undefined, req: FuzzRequest, a: Answer, json: unknown, before: Snapshot, after: Snapshot, replayed = false): void {
  const s = a.statusCode;
  const unchanged = () => {
    if (before.text !== after.text) {
      throw new Violation('state-unchanged', `${req.method} ${req.url} answered ${s} but the scenarios changed:\nbefore ${before.text.slice(0, 1500)}\nafter  ${after.text.slice(0, 1500)}`);
    }
    if (before.newestExecution !== undefined && before.newestExecution !== after.newestExecution) {
      throw new Violation('state-unchanged', `${req.method} ${req.url} answered ${s} but an execution was recorded (${after.newestExecution})`);
    }
  };
  const others = (seq: number) => {
    const seqs = new Set([...before.rows.keys(), ...after.rows.keys()]);
    for (const other of seqs) {
      if (other === seq) continue;
      if (!isDeepStrictEqual(before.rows.get(other), after.rows.get(other))) {
        throw new Violation('state-scope', `${req.method} ${req.url} (${s}) changed scenario ${before.rows.get(other)?.id ?? after.rows.get(other)?.id} (seq ${other})`);
      }
    }
  };
  if (replayed || s < 200 || s >= 300 || ['GET', 'HEAD', 'OPTIONS'].includes(req.method) || !op) {
    unchanged();
    return;
  }
  const payload = req.payload === undefined ? undefined : JSON.parse(req.payload);
  switch (op.operationId) {
    case 'createScenario': {
      const rec = json as Row;
      const project = (payload.input as { projectId?: string | null }).projectId ?? null;
      const row = rowsWithId(after, rec.id).find((r) => projectOf(r) === project);
      if (!row || before.rows.has(row.seq)) throw new Violation('create-state', `201 for ${rec.id} but the store ${row ? 'had it already' : 'lacks it'}`);
      if (!isDeepStrictEqual(row.input, payload.input)) throw new Violation('create-roundtrip', `stored ${JSON.stringify(row.input)}\nsent   ${JSON.stringify(payload.input)}`);
      if (!isDeepStrictEqual(rec.input, payload.input) || rec.revision !== 1 || row.revision !== 1) throw new Violation('create-answer', JSON.stringify(rec));
      others(row.seq);
      return;
    }
    case 'updateScenario': {
      const id = req.target!;
      const old = onlyRow(before, id, req);
      const row = old && after.rows.get(old.seq);
      if (!old || !row) throw new Violation('patch-state', `200 for ${id} but it is not one scenario before or is missing after`);
      const expected = mergePatch(old.input, payload.input);
      if (!isDeepStrictEqual(row.input, expected)) throw new Violation('patch-merge', `stored ${JSON.stringify(row.input)}\nexpected ${JSON.stringify(expected)}`);
      if (!isDeepStrictEqual((json as { input: unknown }).input, expected)) throw new Violation('patch-answer', JSON.stringify(json));
      if (row.revision !== old.revision + 1 || row.createdAt !== old.createdAt || row.seq !== old.seq) {
        throw new Violation('patch-revision', `before ${JSON.stringify({ ...old, input: undefined })} after ${JSON.stringify({ ...row, input: undefined })}`);
      }
      others(old.seq);
      return;
    }
    case 'deleteScenario': {
      const id = req.target!;
      const old = onlyRow(before, id, req);
      if (!old || after.rows.has(old.seq)) throw new Violation('delete-state', `204 for ${id}: before ${rowsWithId(before, id).length} rows, after ${old ? 'still there' : '-'}`);
      others(old.seq);
      return;
    }
    case 'executeScenario': {
      if (before.text !== after.text) throw new Violation('execute-state', 'execute changed the scenarios');
      const results = json as { objectId: string; objectType: string; name: string; address: string; scenarioId: string; executionId: string; result: { executionId: string; query: unknown } }[];
      const row = onlyRow(before, payload.scenarioId, req);
      if (!row) throw new Violation('execute-state', `200 for scenario ${payload.scenarioId}, which is not one scenario`);
      const input = row.input as { name: string; type: string; queryConfigurations: { id: string; query: unknown }[] };
      const address = typeof payload.address === 'string' ? payload.address : payload.address.address;
      if (results.map((r) => r.objectId).join('\n') !== input.queryConfigurations.map((q) => q.id).join('\n')) {
        throw new Violation('execute-results', `objectIds ${JSON.stringify(results.map((r) => r.objectId))} for ${JSON.stringify(input.queryConfigurations.map((q) => q.id))}`);
      }
      results.forEach((r, i) => {
        const bad = r.scenarioId !== payload.scenarioId || r.name !== input.name || r.objectType !== input.type || r.address !== address ||
          r.executionId !== results[0]!.executionId || r.result.executionId !== r.executionId ||
          !echoes(r.result.query, input.queryConfigurations[i]?.query);
        if (bad) throw new Violation('execute-results', `result ${i}: ${JSON.stringify(r).slice(0, 600)} for scenario ${JSON.stringify(input).slice(0, 600)}`);
      });
      if (results.length && after.newestExecution !== undefined && after.newestExecution !== results[0]!.executionId) {
        throw new Violation('execute-audit', `answered executionId ${results[0]!.executionId}, newest recorded ${after.newestExecution}`);
      }
      break;
    }
    default:
      break;
  }
}

/**
 * A result echoes its rule's query, a value list over 128 bytes abbreviated: a prefix of the list, `valueCount` its
 * length, every other field as in the rule (README, bounded answers).
 */
function echoes(echo: unknown, query: unknown): boolean {
  if (isDeepStrictEqual(echo, query)) return true;
  if (!isRecord(echo) || !isRecord(query) || !Array.isArray(query.value) || !Array.isArray(echo.value)) return false;
  const { value, valueCount, ...rest } = echo;
  const { value: full, ...ruleRest } = query;
  return valueCount === full.length && value.length < full.length && Buffer.byteLength(JSON.stringify(value)) <= 128 &&
    isDeepStrictEqual(value, full.slice(0, value.length)) && isDeepStrictEqual(rest, ruleRest);
}
