/**
 * Types are the type-scoped terms of the loader's JSON-LD contexts. A rule naming a type or attribute near, but not,
 * a known one (a typo) is refused; a type far from every known one is accepted: the service may not hold its context.
 */
import type { FieldProblem } from '../engine/validate.js';
import { isRecord } from '../schemas/json.js';

/** null: a plain value. */
export interface Level {
  readonly names: ReadonlyMap<string, Level | null | 'open'>;
  /** A plain value's declared `@type` (xsd:integer …), where its context gives one: the console's editor offers by it. */
  readonly datatypes?: ReadonlyMap<string, string>;
}

export interface CredentialTypes {
  readonly types: ReadonlyMap<string, Level | 'open'>;
}

/** Remote references are skipped. */
function definitions(context: unknown): Array<Record<string, unknown>> {
  return (Array.isArray(context) ? context : [context]).filter(isRecord);
}

/** The W3C envelope's types: a rule may name them, but they define no subject attributes. */
const ENVELOPE_TYPES: ReadonlySet<string> = new Set(['VerifiableCredential', 'VerifiablePresentation']);

function isAttributeTerm(name: string, def: unknown): boolean {
  if (name.startsWith('@')) return false;
  if (typeof def === 'string') return def === '@id' || def === '@type' || (!def.startsWith('@') && !/[#/:]$/.test(def));
  return isRecord(def);
}

/** A scoped context given only by reference makes the level open. */
function levelOf(scoped: unknown, inherited: ReadonlySet<string>, propagateByDefault: boolean): Level | 'open' {
  const own = definitions(scoped);
  if (own.length === 0) return 'open';
  // JSON-LD 1.1: a property-scoped context propagates unless it says otherwise, a type-scoped one only when it says so.
  const propagate = own.some((d) => d['@propagate'] === true) || (propagateByDefault && own.every((d) => d['@propagate'] !== false));
  const terms = own.flatMap((d) => Object.entries(d).filter(([name, def]) => isAttributeTerm(name, def)));
  const below = propagate ? new Set([...inherited, ...terms.map(([name]) => name)]) : inherited;
  const names = new Map<string, Level | null | 'open'>();
  const datatypes = new Map<string, string>();
  for (const [name, def] of terms) {
    const child = childOf(def, below);
    names.set(name, child);
    if (child === null && isRecord(def) && typeof def['@type'] === 'string') datatypes.set(name, def['@type']);
  }
  for (const name of inherited) if (!names.has(name)) names.set(name, 'open');
  return { names, datatypes };
}

function childOf(def: unknown, inherited: ReadonlySet<string>): Level | null | 'open' {
  if (def === '@id' || def === '@type') return null;
  if (!isRecord(def)) return 'open';
  if (def['@context'] !== undefined) return levelOf(def['@context'], inherited, true);
  const type = def['@type'];
  return typeof type === 'string' && type !== '@id' && type !== '@vocab' ? null : 'open';
}

function merge(a: Level | 'open', b: Level | 'open'): Level | 'open' {
  if (a === 'open' || b === 'open') return 'open';
  const names = new Map(a.names);
  const datatypes = new Map([...(b.datatypes ?? []), ...(a.datatypes ?? [])]);
  for (const [k, v] of b.names) {
    const had = names.get(k);
    if (had === undefined || had === null) names.set(k, v);
    else if (v !== null) names.set(k, merge(had, v));
  }
  return { names, datatypes };
}

/** Never throws: unreadable documents are skipped. */
export function knownTypes(documents: Iterable<readonly [string, unknown]>): CredentialTypes {
  const types = new Map<string, Level | 'open'>();
  for (const [, raw] of documents) {
    let doc: unknown = raw;
    if (typeof raw === 'string') {
      try {
        doc = JSON.parse(raw);
      } catch {
        continue;
      }
    }
    if (!isRecord(doc)) continue;
    for (const top of definitions(doc['@context'])) {
      for (const [name, def] of Object.entries(top)) {
        if (name.startsWith('@') || ENVELOPE_TYPES.has(name) || !isRecord(def) || def['@context'] === undefined) continue;
        const attributes = levelOf(def['@context'], new Set(), false);
        const had = types.get(name);
        types.set(name, had === undefined ? attributes : merge(had, attributes));
      }
    }
  }
  return { types };
}

/** Documents change only with a restart. */
export function knownTypesOnce(documents: () => Iterable<readonly [string, unknown]>): () => CredentialTypes {
  let types: CredentialTypes | undefined;
  return () => (types ??= knownTypes(documents()));
}

/**
 * Edit distances per create or patch. Past it, suggestions come from case and prefix alone, so a body of many
 * near-miss names stays cheap.
 */
export const SUGGESTION_DISTANCES = 1024;

export interface SuggestionBudget {
  distances: number;
  readonly max: number;
  readonly seen: WeakMap<object, Map<string, string[]>>;
}

export const suggestionBudget = (max = SUGGESTION_DISTANCES): SuggestionBudget => ({ distances: 0, max, seen: new WeakMap() });

const FAR = Number.MAX_SAFE_INTEGER;
/** Rows are filled to their length: the fallback is never taken. */
const cell = (r: readonly number[], k: number): number => r[k] ?? FAR;

/** Optimal string alignment distance, banded: `max + 1` when above `max`. */
function distanceWithin(s: string, t: string, max: number): number {
  if (Math.abs(s.length - t.length) > max) return max + 1;
  const w = t.length + 1;
  let before = new Array<number>(w).fill(FAR); // row i - 2
  let prev = Array.from({ length: w }, (_, j) => (j <= max ? j : FAR)); // row i - 1
  let row = new Array<number>(w).fill(FAR);
  for (let i = 1; i <= s.length; i++) {
    row.fill(FAR);
    if (i <= max) row[0] = i;
    let least = cell(row, 0);
    for (let j = Math.max(1, i - max); j <= Math.min(t.length, i + max); j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min(cell(prev, j) + 1, cell(row, j - 1) + 1, cell(prev, j - 1) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) v = Math.min(v, cell(before, j - 2) + 1);
      row[j] = v;
      if (v < least) least = v;
    }
    if (least > max) return max + 1;
    [before, prev, row] = [prev, row, before];
  }
  return Math.min(cell(prev, t.length), max + 1);
}

function nearness(a: string, known: string, budget: SuggestionBudget): number | undefined {
  const b = known.toLowerCase();
  if (a === b) return 0;
  if (a.length >= 4 && b.length >= 4 && (b.startsWith(a) || a.startsWith(b))) return 1;
  const allowed = Math.min(a.length, b.length) <= 4 ? 1 : 2;
  if (Math.abs(a.length - b.length) > allowed || budget.distances >= budget.max) return undefined;
  budget.distances += 1;
  const d = distanceWithin(a, b, allowed);
  return d <= allowed ? 1 + d : undefined;
}

export function nearestNames(name: string, known: Iterable<string>, budget = suggestionBudget()): string[] {
  const a = name.toLowerCase();
  const scored: Array<[string, number]> = [];
  for (const k of known) {
    const n = nearness(a, k, budget);
    if (n !== undefined) scored.push([k, n]);
  }
  return scored.sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0])).slice(0, 3).map(([k]) => k);
}

function suggest(name: string, known: ReadonlyMap<string, unknown>, budget: SuggestionBudget): string[] {
  let seen = budget.seen.get(known);
  if (seen === undefined) budget.seen.set(known, (seen = new Map()));
  let near = seen.get(name);
  if (near === undefined) seen.set(name, (near = nearestNames(name, known.keys(), budget)));
  return near;
}

const quoteList = (names: readonly string[]) => names.join(', ');
const INDEX = /^(?:0|[1-9][0-9]{0,8})$/;

function attributeProblem(type: string, attributes: Level | 'open', attribute: string, budget: SuggestionBudget): string | undefined {
  let level: Level | null | 'open' = attributes;
  const done: string[] = [];
  for (const segment of attribute.split('.')) {
    if (level === 'open') return undefined;
    // A canonical index steps into an array of the same term (engine/path.ts).
    if (INDEX.test(segment) && done.length > 0) {
      done.push(segment);
      continue;
    }
    const where = done.length === 0 ? type : `${done.join('.')} of ${type}`;
    if (level === null) return `${done.join('.')} is a plain value in ${type}: it has no attribute ${segment}`;
    const next: Level | null | 'open' | undefined = level.names.get(segment);
    if (next === undefined) {
      const prefix = done.length === 0 ? '' : `${done.join('.')}.`;
      const near = suggest(segment, level.names, budget).map((n) => prefix + n);
      const hint = near.length > 0
        ? `did you mean ${quoteList(near)}?`
        : `known: ${quoteList([...level.names.keys()].filter((n) => n !== 'id' && n !== 'type').slice(0, 12).map((n) => prefix + n))}`;
      return `${attribute} is not an attribute of ${type}: ${where} has no ${segment}; ${hint}`;
    }
    level = next;
    done.push(segment);
  }
  return undefined;
}

/** One call is one request: `budget` bounds its edit distances. */
export function checkCredentialTypes(
  queryConfigurations: readonly unknown[],
  known: CredentialTypes,
  base = '/queryConfigurations',
  budget = suggestionBudget(),
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!Array.isArray(queryConfigurations)) return problems;
  queryConfigurations.forEach((qc, i) => {
    const query = isRecord(qc) ? qc.query : undefined;
    if (!isRecord(query) || typeof query.type !== 'string') return;
    const at = `${base}/${i}/query`;
    const type = query.type;
    const attributes = known.types.get(type);
    if (attributes === undefined) {
      const near = ENVELOPE_TYPES.has(type) ? [] : suggest(type, known.types, budget);
      if (near.length > 0) {
        problems.push({
          pointer: `${at}/type`,
          message: `${type} is not a credential type the service knows; did you mean ${quoteList(near)}? ` +
            '(a type whose JSON-LD context the service does not hold is accepted only when its name is not near a known one)',
        });
      }
      return;
    }
    if (typeof query.attribute !== 'string' || query.attribute.length === 0) return;
    const problem = attributeProblem(type, attributes, query.attribute, budget);
    if (problem !== undefined) problems.push({ pointer: `${at}/attribute`, message: problem });
  });
  return problems;
}
