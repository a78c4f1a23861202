/**
 * The query hash is compared too: a wallet proves the query hash, so fields that look right under a hash of another
 * query do not match.
 */
import { Path } from '@iden3/js-jsonld-merklization';
import type { LRUCache } from 'lru-cache';
import { keep, lruCache } from '../domain/cache.js';
import type { Query } from '../schemas/scenario.js';
import {
  calculateCoreSchemaHash, calculateQueryHashV2, calculateQueryHashV3, parseQueryMetadata, prepareCircuitArrayValues, QueryOperators,
  SchemaHash, type DocumentLoader, type QueryMetadata,
} from '../zkp/sdk.js';
import type { StoredLinkedQuery, StoredQuery } from './proof-status.js';

/** Values the V2 circuits hash (js-sdk pads to this many); V3 uses the same. */
export const VALUE_ARRAY_SIZE = 64;

export interface RequestMatchOptions {
  contexts?: Readonly<Record<string, string>>;
  /** Without one no rule can be compared. */
  documentLoader?: DocumentLoader;
}

/** A rule's circuit query, as js-sdk computes it from the rule's JSON-LD context. */
export interface Expected {
  context: string;
  typeId: string;
  schema: bigint;
  operator: number;
  meta: QueryMetadata;
}

export type RequestComparison =
  | { match: true }
  | { match: false; differences: string[] }
  | { match: 'unknown'; why: string };

const operatorName = (code: bigint) => Object.entries(QueryOperators).find(([, c]) => BigInt(c) === code)?.[0] ?? `operator ${code}`;
const list = (values: readonly bigint[]) => {
  const shown = values.slice(0, 8).map(String);
  return `[${shown.join(', ')}${values.length > 8 ? ', …' : ''}]`;
};
/** Values without the zeros a request pads them with. */
const trimmed = (values: readonly bigint[]) => {
  let n = values.length;
  while (n > 0 && values[n - 1] === 0n) n--;
  return values.slice(0, n);
};

function conditionDifferences(
  query: Query, { meta, operator }: Expected, stored: { claimPathKey: bigint; operator: bigint; slotIndex: bigint; values: readonly bigint[] },
): string[] {
  const differences: string[] = [];
  if (stored.operator !== BigInt(operator)) {
    differences.push(`its operator is ${operatorName(stored.operator)}, the rule's is ${query.operator}`);
  }
  if (stored.claimPathKey !== meta.claimPathKey || stored.slotIndex !== BigInt(meta.slotIndex)) {
    differences.push(`it asks about another attribute (claimPathKey ${stored.claimPathKey}, slot ${stored.slotIndex}) than the rule's ` +
      `${JSON.stringify(query.attribute ?? '')} (claimPathKey ${meta.claimPathKey}, slot ${meta.slotIndex})`);
  }
  const [have, want] = [trimmed(stored.values), trimmed(meta.values)];
  if (stored.values.length > VALUE_ARRAY_SIZE || have.length !== want.length || have.some((v, i) => v !== want[i])) {
    differences.push(`its values are ${list(have)}, the rule's ${list(meta.values)}`);
  }
  return differences;
}

/** js-sdk's calculateQueryHashV3 of the expected query: the V3 circuits' and (no revocation flag, verifier or session) linkedMultiQuery's. */
export function queryHashV3(
  { meta, schema, operator }: Expected, other: { revocationChecked: boolean; verifierID?: bigint; nullifierSessionID?: bigint },
): bigint {
  return calculateQueryHashV3(
    prepareCircuitArrayValues(meta.values.slice(), VALUE_ARRAY_SIZE), SchemaHash.newSchemaHashFromInt(schema), BigInt(meta.slotIndex),
    BigInt(operator), meta.claimPathKey, meta.values.length, meta.merklizedSchema ? 1 : 0, other.revocationChecked ? 1 : 0,
    other.verifierID ?? 0n, other.nullifierSessionID ?? 0n,
  );
}

/** js-sdk's calculateQueryHashV2 of the expected query. */
export function queryHashV2({ meta, schema, operator }: Expected, claimPathNotExists: bigint): bigint {
  const values = prepareCircuitArrayValues(meta.values.slice(), VALUE_ARRAY_SIZE); // it pads the array it is given
  return calculateQueryHashV2(
    values, SchemaHash.newSchemaHashFromInt(schema), BigInt(meta.slotIndex), BigInt(operator), meta.claimPathKey, claimPathNotExists,
  );
}

const hashDifference = (stored: bigint, computed: bigint) =>
  `its query hash ${stored} is not the hash of its fields (${computed}, as the iden3 libraries compute it): ` +
  'a wallet proves the query of that hash, not the fields';

/** The schema is not in the params: the hash carries it. */
function compareLinked(query: Query, expected: Expected, stored: StoredLinkedQuery): RequestComparison {
  const differences: string[] = [];
  let hash: bigint | undefined; // the same for every condition: computed once, where one's fields match
  for (const [i, condition] of stored.conditions.entries()) {
    const found = conditionDifferences(query, expected, condition);
    if (found.length > 0) {
      differences.push(`condition ${i + 1}: ${found.join(', ')}`);
      continue;
    }
    hash ??= queryHashV3(expected, { revocationChecked: false });
    if (hash === condition.queryHash) return { match: true };
    differences.push(`condition ${i + 1}: ${hashDifference(condition.queryHash, hash)} (or the rule's credential type ${expected.typeId} is not the group's)`);
  }
  return { match: false, differences: differences.length > 0 ? differences : ['it holds no condition'] };
}

export class RequestMatcher {
  private readonly expected: LRUCache<string, Expected | string> | undefined = lruCache(1000);

  constructor(private readonly options: RequestMatchOptions) {}

  /** Never rejects. */
  async compare(query: Query, stored: StoredQuery | StoredLinkedQuery): Promise<RequestComparison> {
    const expected = await this.expectedOf(query);
    if (typeof expected === 'string') return { match: 'unknown', why: expected };
    if (stored.kind === 'linked') return compareLinked(query, expected, stored);
    const differences: string[] = [];
    const { meta } = expected;
    if (stored.schema !== expected.schema) {
      differences.push(`its schema hash is ${stored.schema}, the rule's credential type ${expected.typeId} has ${expected.schema}`);
    }
    differences.push(...conditionDifferences(query, expected, stored));
    if (stored.kind === 'v2' && meta.merklizedSchema && meta.claimPathKey !== 0n && stored.claimPathNotExists !== 0n) {
      differences.push(`it asks for the attribute's absence (claimPathNotExists ${stored.claimPathNotExists})`);
    }
    if (differences.length > 0) return { match: false, differences };
    const hash = this.queryHash(expected, stored);
    if (hash !== stored.queryHash) return { match: false, differences: [hashDifference(stored.queryHash, hash)] };
    return { match: true };
  }

  private queryHash(expected: Expected, stored: StoredQuery): bigint {
    if (stored.kind === 'v3') {
      return queryHashV3(expected, { revocationChecked: !stored.skipClaimRevocationCheck, verifierID: stored.verifierID, nullifierSessionID: stored.nullifierSessionID });
    }
    return queryHashV2(expected, stored.claimPathNotExists ?? 0n);
  }

  /** Kept per rule: JSON-LD processing is slow. */
  private async expectedOf(query: Query): Promise<Expected | string> {
    const key = JSON.stringify([query.type, query.context, query.attribute, query.operator, query.value]);
    const hit = this.expected?.get(key);
    if (hit !== undefined) return hit;
    const result = await expectedQuery(query, this.options);
    keep(this.expected, key, result);
    return result;
  }
}

/** A string says why the rule's circuit query cannot be computed. */
export async function expectedQuery(query: Query, { contexts, documentLoader }: RequestMatchOptions): Promise<Expected | string> {
  const context = query.context ?? (contexts && Object.hasOwn(contexts, query.type) ? contexts[query.type] : undefined);
  if (context === undefined) {
    return `the rule names no JSON-LD context for ${query.type} (query.context, or ZKP_CONTEXTS), so its circuit query is unknown`;
  }
  if (documentLoader === undefined) return 'the service has no JSON-LD documents to read the rule\'s context with';
  const operator = QueryOperators[query.operator];
  if (operator === undefined) return `operator ${query.operator} has no circuit code`;
  try {
    const { document } = await documentLoader(context);
    const ld = JSON.stringify(document);
    const typeId = await Path.getTypeIDFromContext(ld, query.type, { documentLoader });
    const schema = calculateCoreSchemaHash(new TextEncoder().encode(typeId)).bigInt();
    const property = query.operator === '$noop'
      ? { fieldName: '', operator }
      : { fieldName: query.attribute ?? '', operator, operatorValue: query.value };
    const meta = await parseQueryMetadata(property, ld, query.type, { documentLoader });
    return { context, typeId, schema, operator, meta };
  } catch (err) {
    return `the rule's query cannot be read against its context ${context}: ${err instanceof Error ? err.message : String(err)}`;
  }
}
