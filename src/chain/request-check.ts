/**
 * The proof status says whether the address proved request N; this says whether request N asks what the rule says.
 * A request that cannot be compared makes the outcome `error` unless CHAIN_ALLOW_UNCHECKED_REQUESTS=true.
 */
import type { LRUCache } from 'lru-cache';
import { keep, lruCache } from '../domain/cache.js';
import type { QueryConfiguration } from '../schemas/scenario.js';
import type { OnChainRuleOutcome } from './outcomes.js';
import type { RequestComparison, RequestMatcher } from './request-match.js';
import { compareParams, issuerIdsOf } from './request-params.js';
import { requestIdOf, type RequestId, type StoredLinkedQuery, type StoredQuery, type StoredRequestEntry } from './proof-status.js';

/** As long as the reader keeps a stored request (request-reads.ts REQUEST_TTL_MS). */
const REQUEST_CHECK_TTL_MS = 60_000;

export interface RequestCheckOptions {
  matcher?: RequestMatcher;
  allowUnchecked?: boolean;
}

export class RequestCheck {
  private readonly comparisons: LRUCache<string, RequestComparison> | undefined = lruCache(10_000);
  private readonly issuers: LRUCache<string, Map<bigint, string> | 'any'> | undefined = lruCache(1000);

  constructor(private readonly options: RequestCheckOptions = {}) {}

  private async compare(
    matcher: RequestMatcher, o: OnChainRuleOutcome, requestId: RequestId, stored: StoredQuery | StoredLinkedQuery, qc: QueryConfiguration,
  ): Promise<RequestComparison> {
    const hashes = stored.kind === 'linked' ? stored.conditions.map((c) => c.queryHash).join(',') : stored.queryHash;
    const key = `${o.chain}|${o.scenarioVerifierAddress?.toLowerCase()}|${requestId}|${hashes}|${JSON.stringify(qc.query)}`;
    let comparison = this.comparisons?.get(key);
    if (comparison === undefined) {
      comparison = await matcher.compare(qc.query, stored);
      keep(this.comparisons, key, comparison, REQUEST_CHECK_TTL_MS);
    }
    return comparison;
  }

  private trustedIds(trustedIssuers: readonly string[] | null | undefined): ReadonlyMap<bigint, string> | undefined {
    if (!trustedIssuers) return undefined;
    const key = trustedIssuers.join(',');
    let ids = this.issuers?.get(key);
    if (ids === undefined) {
      ids = issuerIdsOf(trustedIssuers) ?? 'any';
      keep(this.issuers, key, ids);
    }
    return ids === 'any' ? undefined : ids;
  }

  /** `entries` in any order, matched by request id. */
  async apply(
    outcomes: readonly OnChainRuleOutcome[], configurations: readonly QueryConfiguration[], entries: readonly StoredRequestEntry[],
    trustedIssuers?: readonly string[] | null,
  ): Promise<OnChainRuleOutcome[]> {
    const byId = new Map(entries.map((e) => [String(e.requestId), e]));
    const trusted = this.trustedIds(trustedIssuers);
    return Promise.all(outcomes.map(async (o, i) => {
      const qc = configurations[i];
      if (o.status === 'error' || o.requestId === null || qc === undefined) return o;
      const where = `verifier ${o.scenarioVerifierAddress} (${o.chain})`;
      const error = (reason: string): OnChainRuleOutcome => {
        const { txHash: _tx, ...rest } = o;
        return { ...rest, status: 'error', is_valid: false, reasons: [reason] };
      };
      const unchecked = (why: string): OnChainRuleOutcome => {
        if (this.options.allowUnchecked === true) {
          return { ...o, reasons: [...o.reasons, `request ${o.requestId} was not compared with rule "${qc.id}" (CHAIN_ALLOW_UNCHECKED_REQUESTS=true): ${why}`] };
        }
        return error(`rule "${qc.id}": the service cannot tell whether request ${o.requestId} on ${where} asks what the rule says: ${why} ` +
          '(CHAIN_ALLOW_UNCHECKED_REQUESTS=true accepts such requests unchecked)');
      };
      const entry = byId.get(o.requestId) ?? byId.get(String(requestIdOf(qc.query.requestId)));
      if (entry === undefined) return error(`request ${o.requestId} was not read from ${where}`);
      if ('error' in entry) return error(`could not read request ${o.requestId} from ${where}: ${entry.error}`);
      if ('unreadable' in entry) return unchecked(entry.unreadable);
      const { matcher } = this.options;
      if (matcher === undefined) return unchecked('no JSON-LD documents are configured to read the rule with');
      const singles = 'requests' in entry ? entry.requests : [entry];
      const multi = 'requests' in entry ? ` (multi-request of ${singles.map((r) => String(r.requestId)).join(', ')})` : '';
      const differences: string[] = [];
      const unknown: string[] = [];
      for (const single of singles) {
        if ('error' in single) {
          unknown.push(`request ${single.requestId}: ${single.error}`);
          continue;
        }
        if ('unreadable' in single) {
          unknown.push(single.unreadable);
          continue;
        }
        const comparison = await this.compare(matcher, o, single.requestId, single.query, qc);
        if (comparison.match === 'unknown') {
          unknown.push(comparison.why);
          continue;
        }
        const params = compareParams(qc.query, single.query, trusted);
        if (comparison.match === true && params.differences.length === 0) {
          // A multi-request proves the rule when one of its requests asks it.
          if (params.notes.length === 0) return o;
          return { ...o, reasons: [...o.reasons, `request ${single.requestId} asks more than rule "${qc.id}": ${params.notes.join('; ')}`] };
        }
        differences.push(...(comparison.match === false ? comparison.differences : []), ...params.differences);
      }
      if (unknown.length > 0) return unchecked(unknown.join('; '));
      return error(`rule "${qc.id}" does not match request ${o.requestId}${multi} on ${where}, which asks something else: ${differences.join('; ')}`);
    }));
  }
}
