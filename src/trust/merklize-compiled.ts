/**
 * A merklizer compiled per @context list: the credential's JSON mapped to RDF quads through term definitions that
 * jsonld processed once (type- and property-scoped contexts included, each once per context state), then the quads
 * given to the same URDNA2015 canonicalisation and turned into the same leaves as @iden3/js-jsonld-merklization 1.7.2's
 * Merklizer.merklizeJSONLD, parsed by the same n3 parser. Answers undefined for anything it does not follow exactly
 * (the caller runs the library): keywords other than @context/@id/@type, containers, language or direction, @json,
 * a context with a reverse term, blank node ids, relative IRIs or IRIs with characters outside RFC 3986's ASCII set,
 * a property mapped to rdf:type, a key the context does not define, more than one credentialSubject type, nesting
 * deeper than MAX_DEPTH, nodes whose parents form a cycle. A plan's memos are bounded (states, keys, path keys).
 */
import { createRequire } from 'node:module';
import { MtValue, Path, PoseidonHasher, Temporal, type Value } from '@iden3/js-jsonld-merklization';
import { LRUCache } from 'lru-cache';
import type { DocumentLoader } from '../jsonld/documents.js';
import { sparseMerkleRoot } from './merklize.js';
import { FIELD } from './poseidon.js';
import { isRecord } from '../schemas/json.js';

interface TermDefinition {
  '@id'?: string;
  reverse?: boolean;
}
interface ActiveContext {
  mappings: Map<string, TermDefinition | null>;
  previousContext?: ActiveContext;
  revertToPreviousContext(): ActiveContext;
}
interface JsonLdContextApi {
  process(args: { activeCtx: ActiveContext; localCtx: unknown; options: object; propagate?: boolean; overrideProtected?: boolean }): Promise<ActiveContext>;
  expandIri(ctx: ActiveContext, value: string, relativeTo: { base?: boolean; vocab?: boolean }, options: object): string | null;
  getContextValue(ctx: ActiveContext, key: string, type: string): unknown;
  getInitialContext(options: object): ActiveContext;
}
interface Term {
  termType: 'NamedNode' | 'BlankNode' | 'Literal' | 'DefaultGraph';
  value: string;
  datatype?: { termType: 'NamedNode'; value: string };
}
interface Quad {
  subject: Term;
  predicate: Term;
  object: Term;
  graph: Term;
}
interface Canonize {
  canonize(dataset: Quad[], options: { algorithm: string }): Promise<string>;
}
/** n3's quads: what rdf-canonize printed, read back as the library reads it (with n3's term equality). */
interface ParsedQuad extends Quad {
  equals(other: ParsedQuad): boolean;
}
interface N3 {
  Parser: new (o: { format: string }) => { parse(text: string): ParsedQuad[] };
}

// The jsonld and rdf-canonize the library itself resolves: the same code, the same module caches.
const fromLibrary = createRequire(createRequire(import.meta.url).resolve('@iden3/js-jsonld-merklization'));
const jsonldRequire = createRequire(fromLibrary.resolve('jsonld'));
const ctxApi = jsonldRequire('./context.js') as JsonLdContextApi;
const events = jsonldRequire('./events.js') as { setupEventHandler(o: { options: { safe: boolean } }): unknown };
const ContextResolver = jsonldRequire('./ContextResolver.js') as new (o: { sharedCache: Map<string, unknown> }) => object;
const canon = createRequire(fromLibrary.resolve('jsonld'))('rdf-canonize') as Canonize;
const n3 = fromLibrary('n3') as N3;

const XSD = 'http://www.w3.org/2001/XMLSchema#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const CREDENTIAL_SUBJECT = 'https://www.w3.org/2018/credentials#credentialSubject';
const VERIFIABLE_CREDENTIAL = 'https://www.w3.org/2018/credentials#VerifiableCredential';
/**
 * An absolute IRI of RFC 3986's ASCII characters only: such an IRI is printed by rdf-canonize and read back by n3
 * unchanged, and jsonld's own absolute-IRI test accepts it. Anything else (spaces, `|`, `\`, `<`, quotes, non-ASCII,
 * U+0000) goes to the library, whose N-Quads round trip is the reference.
 */
const SAFE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const RDF_TYPE_PROPERTY = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const MAX_LEVELS = 40;
const PLANS = 64;
const PATH_KEYS = 4096;
const MEMO = 1024;
/** Per plan: the context states it keeps (type- and property-scoped contexts met), and the keys it remembers. */
const MAX_STATES = 256;
const MAX_KEYS = 8192;
/** Per plan: the term definitions its states hold in all (each state is a full copy of an active context). */
const MAX_MAPPINGS = 16_384;
/** An inline @context longer than this is left to the library: a plan keeps jsonld's processed copies of it. */
const MAX_CONTEXT_CHARS = 16_384;
/**
 * Memo keys are the sender's strings (keys, IRIs in paths, types): longer ones are not remembered, so that a plan's
 * memos are bounded in bytes, not only in entries.
 */
const MAX_MEMO_CHARS = 1024;
/** jsonld's own resolved-context cache is an LRU of 100 for the whole process; a plan keeps at most this many. */
const RESOLVED_CONTEXTS = 100;
/** Node objects nested deeper are left to the library: no real credential comes near. */
const MAX_DEPTH = 16;
/** For the tests. */
export const COMPILED_BOUNDS = { states: MAX_STATES, mappings: MAX_MAPPINGS, keys: MAX_KEYS, pathKeys: PATH_KEYS, depth: MAX_DEPTH, contextChars: MAX_CONTEXT_CHARS };
const hasher = new PoseidonHasher();

class Unsupported extends Error {}
const unsupported = (): never => {
  throw new Unsupported();
};
const absolute = (iri: string | null): string => (iri !== null && SAFE_IRI.test(iri) ? iri : unsupported());

/**
 * One active context with what was derived from it, each computed once. A plan keeps the states its credentials meet
 * while its budget lasts (MAX_STATES states, MAX_MAPPINGS term definitions in all: each state is a whole copy of an
 * active context); past it, a state is made for the credential at hand and dropped with it, as the library would, so
 * a sender nesting scoped contexts can neither grow a plan nor spend the fast path of the credentials after it.
 */
class State {
  private readonly keys = new Map<string, string | null>();
  private reverseTerms?: boolean;
  constructor(readonly ctx: ActiveContext, private readonly plan: Plan, private readonly kept: boolean) {}

  key(k: string): string | null {
    let iri = this.keys.get(k);
    if (iri === undefined) {
      iri = ctxApi.expandIri(this.ctx, k, { vocab: true }, this.plan.options);
      // A credential's keys are the sender's: bounded per state, and per plan for the states it keeps.
      if (k.length <= MAX_MEMO_CHARS && this.keys.size < MEMO && (!this.kept || this.plan.keys < MAX_KEYS)) {
        if (this.kept) this.plan.keys++;
        this.keys.set(k, iri);
      }
    }
    return iri;
  }

  /** An IRI value (`@id`, a type, an @id- or @vocab-coerced string) as jsonld.canonize expands it: base null. */
  iri(value: string, vocab: boolean): string {
    return absolute(ctxApi.expandIri(this.ctx, value, vocab ? { base: true, vocab: true } : { base: true }, this.plan.options));
  }

  /** Whether any term of this context is a reverse property: such contexts are left to the library. */
  hasReverseTerms(): boolean {
    if (this.reverseTerms === undefined) {
      this.reverseTerms = false;
      for (const def of this.ctx.mappings.values()) if (def?.reverse) this.reverseTerms = true;
    }
    return this.reverseTerms;
  }

  value(k: string, type: string): unknown {
    return ctxApi.getContextValue(this.ctx, k, type);
  }

  /** A scoped context's states, keyed by the context value itself (the term definition's, stable in this state). */
  private readonly byContext = { property: new Map<unknown, Promise<State>>(), type: new Map<unknown, Promise<State>>() };
  private revertedState?: Promise<State>;

  /** A child state is kept when this one is and the plan's budget has room for one more copy of about this size. */
  private keep(): boolean {
    const plan = this.plan;
    if (!this.kept || plan.states >= MAX_STATES || plan.mappings + this.ctx.mappings.size > MAX_MAPPINGS) return false;
    plan.states++;
    plan.mappings += this.ctx.mappings.size;
    return true;
  }

  /** jsonld's expand: `propagate: true, overrideProtected: true` for a property's context, `propagate: false` for types'. */
  withContext(localCtx: unknown, propertyScoped: boolean): Promise<State> {
    const memo = propertyScoped ? this.byContext.property : this.byContext.type;
    const known = memo.get(localCtx);
    if (known !== undefined) return known;
    const options = this.plan.options;
    const how = propertyScoped ? { propagate: true, overrideProtected: true } : { propagate: false };
    const kept = this.keep();
    const estimate = this.ctx.mappings.size;
    // jsonld caches a processed context by the active context object alone, not by overrideProtected: a kept state
    // met first with a property's context (overrideProtected) would answer a type's context (protected terms checked)
    // from that cache. The library's type-scoped contexts meet a fresh active context each time: so do they here.
    const activeCtx = propertyScoped ? this.ctx : (this.ctx as ActiveContext & { clone(): ActiveContext }).clone();
    const s = ctxApi.process({ activeCtx, localCtx, options, ...how }).then((ctx) => {
      if (kept) this.plan.mappings += ctx.mappings.size - estimate; // the copy's own size, counted once known
      return new State(ctx, this.plan, kept);
    });
    if (kept) {
      s.catch(() => {
        // nothing was kept: the reservation is given back (else each failing credential spends the budget)
        memo.delete(localCtx);
        this.plan.states--;
        this.plan.mappings -= estimate;
      });
      memo.set(localCtx, s);
    }
    return s;
  }

  reverted(): Promise<State> {
    // jsonld's revertToPreviousContext answers the context itself when there is nothing to revert: so does this.
    if (this.ctx.previousContext === undefined) return Promise.resolve(this);
    if (this.revertedState !== undefined) return this.revertedState;
    const kept = this.keep();
    const s = Promise.resolve(new State(this.ctx.revertToPreviousContext(), this.plan, kept));
    if (kept) this.revertedState = s;
    return s;
  }
}

interface Plan {
  options: object;
  /** States made, the term definitions they hold and keys remembered, against MAX_STATES, MAX_MAPPINGS and MAX_KEYS. */
  states: number;
  mappings: number;
  keys: number;
  root?: Promise<State>;
  /** URL -> the document text the plan was compiled with (the first loaded; another text makes the plan stale). */
  documents: Map<string, string>;
  stale: boolean;
  /**
   * A loaded context uses more of JSON-LD than the issuers' contexts do (simpleContext): such plans never answer. One
   * reason among others: with @import, jsonld caches an import's merged context by the active context and answers a
   * later importer of the same URL on that active context with it; the library's active contexts are fresh per
   * credential, a plan's are kept.
   */
  unusual: boolean;
  serialization: Map<string, Promise<string>>;
  pathKeys: Map<string, bigint>;
}

const plans = new LRUCache<string, Plan>({ max: PLANS });

async function textOf(loader: DocumentLoader, url: string): Promise<string> {
  if (loader.text !== undefined) return loader.text(url);
  return JSON.stringify((await loader(url)).document);
}

/**
 * jsonld's ContextResolver keeps each context it resolves (and each, up to 10 processed copies of the active context)
 * in its perOpCache and sharedCache: for one operation in jsonld, for a plan's lifetime here. Both bounded as jsonld
 * bounds its shared one (an evicted URL is loaded again through the plan's loader, and compared as any load).
 */
function boundedResolver(): object {
  const resolver = new ContextResolver({ sharedCache: new LRUCache<string, object>({ max: RESOLVED_CONTEXTS }) as unknown as Map<string, unknown> });
  (resolver as { perOpCache: unknown }).perOpCache = new LRUCache<string, object>({ max: RESOLVED_CONTEXTS });
  return resolver;
}

/** What the contexts of the W3C, iden3 and issuers' documents use (bundled and ../shared's real-world ones). */
const CONTEXT_KEYWORDS = new Set(['@version', '@protected', '@propagate', '@vocab']);
const DEFINITION_KEYWORDS = new Set(['@id', '@type', '@context', '@container', '@nest', '@protected']);
const ALIASES: Record<string, string> = { id: '@id', type: '@type' };

/**
 * A context in that subset: no @import, @base, @reverse, @language, @direction, @index, @prefix or @json, no null
 * scoped context or @vocab, and no keyword aliased but `id` and `type` (and @nest, which the plan never follows).
 * Anything else is left to the library: four reviews found the plan's answers could part from the library's only
 * with contexts outside it, or with contexts a sender wrote.
 */
export function simpleContext(ctx: unknown, depth = 0): boolean {
  if (depth > 8) return false;
  if (typeof ctx === 'string') return true; // a URL: loaded through the plan's loader, checked there
  if (Array.isArray(ctx)) return ctx.every((c) => simpleContext(c, depth + 1));
  if (!isRecord(ctx)) return false;
  for (const [key, value] of Object.entries(ctx)) {
    if (key.startsWith('@')) {
      if (!CONTEXT_KEYWORDS.has(key) || (key === '@vocab' && typeof value !== 'string')) return false;
      continue;
    }
    if (typeof value === 'string') {
      if (value.startsWith('@') && ALIASES[key] !== value && value !== '@nest') return false;
      continue;
    }
    if (!isRecord(value)) return false;
    for (const [k, v] of Object.entries(value)) {
      if (!DEFINITION_KEYWORDS.has(k)) return false;
      if (k === '@id' && (typeof v !== 'string' || v.startsWith('@'))) return false;
      if (k === '@type' && (typeof v !== 'string' || (v.startsWith('@') && v !== '@id' && v !== '@vocab'))) return false;
      if (k === '@context' && (v === null || !simpleContext(v, depth + 1))) return false;
    }
  }
  return true;
}

function newPlan(loader: DocumentLoader): Plan {
  const documents = new Map<string, string>();
  // One read per load: the document the plan processes is the text it records (two reads may see two versions).
  const documentLoader = async (url: string) => {
    let doc: Awaited<ReturnType<DocumentLoader>>;
    let text: string;
    if (loader.text !== undefined) {
      text = await loader.text(url);
      doc = { contextUrl: null, documentUrl: url, document: JSON.parse(text) as unknown };
    } else {
      doc = await loader(url);
      text = JSON.stringify(doc.document);
    }
    if (!isRecord(doc.document) || !simpleContext(doc.document['@context'])) plan.unusual = true;
    const first = documents.get(url);
    if (first === undefined) documents.set(url, text);
    else if (first !== text) plan.stale = true;
    return doc;
  };
  // jsonld.canonize's options as its expansion sees them (safe mode: whatever would warn is refused here first).
  const options = {
    documentLoader,
    base: null,
    safe: true,
    eventHandler: events.setupEventHandler({ options: { safe: true } }),
    contextResolver: boundedResolver(),
  };
  const plan: Plan = { options, states: 0, mappings: 0, keys: 0, documents, stale: false, unusual: false, serialization: new Map(), pathKeys: new Map() };
  return plan;
}

/** The loader's texts are the plan's: checked before a plan is used and again after (contexts load lazily). */
async function sameDocuments(plan: Plan, loader: DocumentLoader): Promise<boolean> {
  for (const [url, text] of plan.documents) {
    if ((await textOf(loader, url)) !== text) return false;
  }
  return !plan.stale;
}

async function planFor(contextKey: string, loader: DocumentLoader): Promise<Plan> {
  const known = plans.get(contextKey);
  if (known !== undefined && (await sameDocuments(known, loader))) return known;
  const plan = newPlan(loader);
  plans.set(contextKey, plan);
  return plan;
}

interface Builder {
  quads: Quad[];
  /** Per subject and property, the values already given: jsonld's node map keeps one of each (its compareValues). */
  values: Map<string, Set<string>>;
  blank: number;
  /** The types of each node object the top node gives as its credentialSubject. */
  subjects: string[][];
}

const named = (value: string): Term => ({ termType: 'NamedNode', value });
const DEFAULT_GRAPH: Term = { termType: 'DefaultGraph', value: '' };

/** `same`: the expanded value as jsonld's compareValues sees it (a JSON value with its type, or a node's id). */
function emit(b: Builder, subject: Term, predicate: string, object: Term, same: string): void {
  const at = `${subject.value}\u0000${predicate}`;
  let seen = b.values.get(at);
  if (seen === undefined) b.values.set(at, (seen = new Set()));
  if (seen.has(same)) return;
  seen.add(same);
  b.quads.push({ subject, predicate: named(predicate), object, graph: DEFAULT_GRAPH });
}
const sameNode = (t: Term): string => `@id ${t.value}`;

function literal(value: unknown, datatype: string | null): Term {
  let text: string;
  let type: string;
  if (typeof value === 'boolean') {
    text = String(value);
    type = datatype ?? `${XSD}boolean`;
  } else if ((typeof value === 'number' && (String(value).includes('.') || Math.abs(value) >= 1e21)) || datatype === `${XSD}double`) {
    const n = typeof value === 'number' ? value : parseFloat(String(value));
    text = n.toExponential(15).replace(/(\d)0*e\+?/, '$1E');
    type = datatype ?? `${XSD}double`;
  } else if (typeof value === 'number') {
    text = value.toFixed(0);
    type = datatype ?? `${XSD}integer`;
  } else if (typeof value === 'string') {
    text = value;
    type = datatype ?? `${XSD}string`;
  } else return unsupported();
  return { termType: 'Literal', value: text, datatype: named(absolute(type)) as { termType: 'NamedNode'; value: string } };
}

/** jsonld's expand (object branch) and toRDF for one node; answers the node's term. */
async function node(b: Builder, st: State, activeProperty: string | null, element: Record<string, unknown>, depth: number): Promise<{ term: Term; types: string[] }> {
  if (depth > MAX_DEPTH) unsupported();
  const top = depth === 0;
  let active = st;
  const keys = Object.keys(element).sort();
  // jsonld's util.clone makes an own __proto__ the clone's prototype: the library never sees the key.
  if (keys.includes('__proto__')) unsupported();
  if (!top) {
    const propertyScoped = activeProperty === null ? undefined : active.value(activeProperty, '@context');
    const typeScoped = active.ctx.previousContext ? active : null;
    let mustRevert = true;
    if (typeScoped !== null && keys.length <= 2 && !keys.includes('@context')) {
      for (const key of keys) {
        const k = typeScoped.key(key);
        if (k === '@value') unsupported();
        if (k === '@id' && keys.length === 1) mustRevert = false;
      }
    }
    if (mustRevert) active = await active.reverted();
    if (propertyScoped !== undefined && activeProperty !== null) active = await active.withContext(propertyScoped, true);
    if ('@context' in element) unsupported();
  } else {
    if (!('@context' in element)) unsupported();
  }
  const typeScopedContext = active;
  const rawTypes: string[] = [];
  let typeKeys = 0;
  for (const key of keys) {
    if (active.key(key) !== '@type') continue;
    if (++typeKeys > 1) unsupported();
    const v = element[key];
    const list = Array.isArray(v) ? v : [v];
    for (const t of list) rawTypes.push(typeof t === 'string' ? t : unsupported());
  }
  for (const t of rawTypes.length > 1 ? rawTypes.slice().sort() : rawTypes) {
    const ctx = typeScopedContext.value(t, '@context');
    if (ctx !== undefined) active = await active.withContext(ctx, false);
  }
  const types = rawTypes.map((t) => typeScopedContext.iri(t, true));

  let subject: Term | undefined;
  for (const key of keys) {
    if (key === '@context') continue;
    if (active.key(key) !== '@id') continue;
    const v = element[key];
    if (typeof v !== 'string' || subject !== undefined) unsupported(); // jsonld: colliding keywords
    subject = named(active.iri(v as string, false));
  }
  subject ??= { termType: 'BlankNode', value: `_:b${b.blank++}` };
  for (const t of types) emit(b, subject, RDF_TYPE, named(t), sameNode(named(t)));

  for (const key of keys) {
    if (key === '@context') continue;
    const property = active.key(key);
    if (property === '@id') continue;
    if (property === '@type') {
      if (typeScopedContext.key(key) !== '@type') unsupported();
      continue;
    }
    if (typeScopedContext.key(key) === '@type') unsupported();
    // jsonld.canonize would print an explicit rdf:type beside @type's, each once: not followed here.
    if (property === null || property.startsWith('@') || !SAFE_IRI.test(property) || property === RDF_TYPE_PROPERTY) unsupported();
    const value = element[key];
    const container = active.value(key, '@container');
    if (Array.isArray(container) && container.some((c) => c !== '@set')) unsupported();
    // jsonld turns even a null into a @json literal
    if (active.value(key, '@type') === '@json') unsupported();
    // jsonld processes the property's own context for every key, a null value's too (it may throw there)
    const scoped = active.value(key, '@context');
    const termCtx = scoped === undefined ? active : await active.withContext(scoped, true);
    if (value === null) continue;
    // jsonld reads a reverse term in the property's own context (termCtx); any reverse term anywhere is left out.
    if (active.hasReverseTerms() || termCtx.hasReverseTerms()) unsupported();
    // jsonld expands the key again in its own context (_expandValue, expandedActiveProperty): a keyword there
    // (@id, @type, @graph, @reverse, ...) changes what the value is.
    const own = termCtx.key(key);
    if (own === null || own.startsWith('@')) unsupported();
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null) continue;
      if (Array.isArray(item)) unsupported();
      if (isRecord(item)) {
        const inner = await node(b, termCtx, key, item, depth + 1);
        if (top && property === CREDENTIAL_SUBJECT) b.subjects.push(inner.types);
        emit(b, subject, property as string, inner.term, sameNode(inner.term));
      } else {
        if (top && property === CREDENTIAL_SUBJECT) b.subjects.push([]);
        const object = scalar(termCtx, key, item);
        emit(b, subject, property as string, object, object.termType === 'Literal' ? sameValue(termCtx, key, item) : sameNode(object));
      }
    }
  }
  return { term: subject, types };
}

/** The @type jsonld's _expandValue gives a scalar's value object: the coerced type, unless @id, @vocab or @none. */
function valueType(st: State, key: string): string | null {
  const type = st.value(key, '@type');
  return typeof type === 'string' && !['@id', '@vocab', '@none'].includes(type) ? type : null;
}

/** A scalar's value object as jsonld's compareValues sees it (its @value, as JSON, and its @type). */
const sameValue = (st: State, key: string, item: unknown): string => JSON.stringify([typeof item, item, valueType(st, key)]);

/** jsonld's _expandValue then _objectToRDF for a JSON scalar. */
function scalar(st: State, key: string, value: unknown): Term {
  const type = st.value(key, '@type');
  if (type === '@id' && typeof value === 'string') return named(st.iri(value, false));
  if (type === '@vocab' && typeof value === 'string') return named(st.iri(value, true));
  const coerced = valueType(st, key);
  if (coerced !== null) return literal(value, coerced);
  if (typeof value === 'string' && (st.value(key, '@language') !== null || st.value(key, '@direction') !== null)) unsupported();
  return literal(value, null);
}

/** @iden3/js-jsonld-merklization's convertStringToXsdValue. */
function xsdValue(dataType: string, s: string): Value {
  switch (dataType) {
    case `${XSD}boolean`:
      if (s === 'false' || s === '0') return false;
      if (s === 'true' || s === '1') return true;
      throw new Error('incorrect boolean value');
    case `${XSD}integer`:
    case `${XSD}nonNegativeInteger`:
    case `${XSD}nonPositiveInteger`:
    case `${XSD}negativeInteger`:
    case `${XSD}positiveInteger`: {
      const int = BigInt(s);
      const half = FIELD / 2n;
      const low = half - FIELD + 1n;
      const ranges: Record<string, [bigint, bigint]> = {
        [`${XSD}positiveInteger`]: [1n, FIELD - 1n],
        [`${XSD}nonNegativeInteger`]: [0n, FIELD - 1n],
        [`${XSD}negativeInteger`]: [low, -1n],
        [`${XSD}nonPositiveInteger`]: [low, 0n],
      };
      const [min, max] = ranges[dataType] ?? [low, half];
      if (int > max || int < min) throw new Error('integer out of range');
      return int;
    }
    case `${XSD}dateTime`:
      if (isNaN(Date.parse(s))) throw new Error('error parsing time string');
      return /^\d{4}-\d{2}-\d{2}$/.test(s) ? Temporal.Instant.from(new Date(s).toISOString()) : Temporal.Instant.from(s);
    case `${XSD}double`:
      return parseFloat(s).toExponential(15).replace(/(\d)0*e\+?/, '$1E');
    default:
      return s;
  }
}

const ref = (t: Term): string | undefined => (t.termType === 'NamedNode' || t.termType === 'BlankNode' ? `${t.termType} ${t.value}` : undefined);
const arrKey = (q: Quad): string => `${q.subject.termType} ${q.subject.value}\u0000${q.predicate.value}`;

/**
 * RDFEntry.fromDataSet and Relationship for one default graph: the leaves in the library's order. A quad's parents are
 * the other quads whose object is its subject, "other" as the library's findParentInsideGraph means it (not equal by
 * n3's Quad.equals, so a repeated quad is not its own copy's parent).
 */
async function leaves(quads: ParsedQuad[], pathKeys: Map<string, bigint>): Promise<Array<[bigint, bigint]>> {
  const parents = new Map<number, number>();
  const children = new Map<string, Map<string, number>>();
  const byObject = new Map<string, number[]>();
  quads.forEach((q, i) => {
    const r = ref(q.object);
    if (r === undefined) return;
    let list = byObject.get(r);
    if (list === undefined) byObject.set(r, (list = []));
    list.push(i);
  });
  quads.forEach((q, i) => {
    const found = (byObject.get(ref(q.subject) ?? '') ?? []).filter((j) => !(quads[j] as ParsedQuad).equals(q));
    if (found.length > 1) throw new Error('multiple parents found');
    const parent = found[0];
    if (parent === undefined) return;
    parents.set(i, parent);
    const pk = arrKey(quads[parent] as Quad);
    let m = children.get(pk);
    if (m === undefined) children.set(pk, (m = new Map()));
    const child = ref(q.subject) as string;
    if (!m.has(child)) m.set(child, m.size);
  });
  const counts = new Map<string, number>();
  for (const q of quads) counts.set(arrKey(q), (counts.get(arrKey(q)) ?? 0) + 1);
  const seen = new Map<string, number>();
  const out: Array<[bigint, bigint]> = [];
  for (let i = 0; i < quads.length; i++) {
    const q = quads[i] as Quad;
    let value: Value;
    if (q.object.termType === 'Literal') value = xsdValue(q.object.datatype?.value ?? '', q.object.value);
    else if (q.object.termType === 'NamedNode') value = q.object.value;
    else if (children.has(arrKey(q))) continue;
    else throw new Error('BlankNode is not supported yet');
    const parts: Array<string | number> = [];
    if ((counts.get(arrKey(q)) ?? 0) > 1) {
      const n = seen.get(arrKey(q)) ?? 0;
      seen.set(arrKey(q), n + 1);
      parts.push(n);
    }
    parts.push(q.predicate.value);
    // Parents that form a cycle would walk for ever (the library's walk does): the library refuses it (see merklize.ts).
    let steps = 0;
    for (let at = i, p = parents.get(i); p !== undefined; at = p, p = parents.get(p)) {
      if (++steps > quads.length) return unsupported();
      const m = children.get(arrKey(quads[p] as Quad)) as Map<string, number>;
      const idx = m.get(ref((quads[at] as Quad).subject) as string) as number;
      if (m.size === 1) parts.push((quads[p] as Quad).predicate.value);
      else parts.push(idx, (quads[p] as Quad).predicate.value);
    }
    parts.reverse();
    // A type's paths repeat from one credential to the next: each key is hashed once per plan.
    const pathId = JSON.stringify(parts);
    const known = pathKeys.get(pathId);
    const key = known ?? (await new Path(parts, hasher).mtEntry());
    if (known === undefined && pathKeys.size < PATH_KEYS && pathId.length <= MAX_MEMO_CHARS) pathKeys.set(pathId, key);
    out.push([key, await MtValue.mkValueMtEntry(hasher, value)]);
  }
  return out;
}

export interface CompiledMerklization {
  root: bigint;
  /** js-sdk's findCredentialType on the library's compacted document. */
  credentialType: string;
  /** js-sdk's getSerializationAttrFromContext for that type, remembered with the plan. */
  serializationAttr(fetch: () => Promise<string>): Promise<string>;
}

/** Undefined where the library must run (it then answers or throws as it always did). */
export async function compiledMerklize(doc: Record<string, unknown>, loader: DocumentLoader): Promise<CompiledMerklization | undefined> {
  try {
    const context = doc['@context'];
    if (context === undefined || context === null) return undefined;
    const contextKey = JSON.stringify(context);
    if (contextKey.length > MAX_CONTEXT_CHARS) return undefined;
    // Term definitions the sender wrote are not followed: only documents the operator's loader serves (bundled, its
    // file, its remote prefixes), and those only in the subset of JSON-LD the issuers' contexts use.
    if (![context].flat().every((c) => typeof c === 'string')) return undefined;
    const plan = await planFor(contextKey, loader);
    if (plan.unusual) return undefined;
    // jsonld mutates the local contexts it processes: it is given a copy, never the credential the library may read next.
    plan.root ??= ctxApi.process({ activeCtx: ctxApi.getInitialContext(plan.options), localCtx: JSON.parse(contextKey) as unknown, options: plan.options }).then((ctx) => {
      plan.states++;
      plan.mappings += ctx.mappings.size;
      return new State(ctx, plan, true);
    });
    plan.root.catch(() => plans.delete(contextKey));
    const b: Builder = { quads: [], values: new Map(), blank: 0, subjects: [] };
    const top = await node(b, await plan.root, null, doc, 0);
    if (b.quads.length === 0) return undefined;
    // The library's compacted document: one credentialSubject object with one type, else the top-level types.
    if (b.subjects.length > 1 || (b.subjects[0]?.length ?? 0) > 1) return undefined;
    let credentialType = b.subjects[0]?.[0];
    if (credentialType === undefined) {
      if (top.types.length !== 2 || new Set(top.types).size !== 2) return undefined;
      if (top.types[0] === VERIFIABLE_CREDENTIAL) credentialType = top.types[1];
      else if (top.types[1] === VERIFIABLE_CREDENTIAL) credentialType = top.types[0];
      else return undefined;
    }
    // Read back by the library's own parser, as the library reads it (n3 keeps a repeated quad).
    const canonical = new n3.Parser({ format: 'application/n-quads' }).parse(await canon.canonize(b.quads, { algorithm: 'URDNA2015' }));
    const ls = await leaves(canonical, plan.pathKeys);
    if (!(await sameDocuments(plan, loader))) return undefined; // another loader's documents reached this plan meanwhile
    if (plan.unusual) return undefined; // a context loaded lazily (a scoped one) is outside the subset
    const keys = new Set<bigint>();
    const prefixes = new Set<bigint>();
    const mask = (1n << BigInt(MAX_LEVELS - 1)) - 1n;
    for (const [k] of ls) {
      if (keys.has(k) || prefixes.has(k & mask)) return undefined;
      keys.add(k);
      prefixes.add(k & mask);
    }
    const type = credentialType as string;
    return {
      root: sparseMerkleRoot(ls, MAX_LEVELS),
      credentialType: type,
      serializationAttr(fetch) {
        let s = plan.serialization.get(type);
        if (s === undefined) {
          s = fetch();
          if (plan.serialization.size < MEMO && type.length <= MAX_MEMO_CHARS) {
            s.catch(() => plan.serialization.delete(type));
            plan.serialization.set(type, s);
          }
        }
        return s;
      },
    };
  } catch {
    return undefined;
  }
}

/** For the tests: what each plan keeps, against its bounds. */
export function compiledPlanSizes(): Array<{ states: number; mappings: number; keys: number; pathKeys: number }> {
  return [...plans.values()].map((p) => ({ states: p.states, mappings: p.mappings, keys: p.keys, pathKeys: p.pathKeys.size }));
}

/** For the tests: drop every compiled plan. */
export function clearCompiledPlans(): void {
  plans.clear();
}
