/**
 * Asks for `application/did-resolution`: driver-did-iden3 answers 406 to `application/json`, older resolvers ignore
 * the header.
 */
import { fetchJson, FetchFailure, type FetchLike } from './http.js';
import { keep as keepFor, lruCache } from '../domain/cache.js';
import { isRecord } from '../schemas/json.js';

export class ResolverFailure extends Error {
  override name = 'ResolverFailure';
}

/** undefined: not there, expired, or Redis did not answer. */
export interface SharedAnswers {
  get(key: string): Promise<{ value: string; ttlMs: number } | undefined>;
  /** ifAbsent: never replaces an entry there (a "not revoked" never overwrites a "revoked"). */
  set(key: string, value: string, ttlMs: number, ifAbsent?: boolean): void;
}

/**
 * A shared entry with what is left of its lifetime, counted from before the question: never past its end in Redis,
 * nor past `ownMs` (this instance's time for that answer). An entry with more left than that was not written by an
 * instance configured as this one: a miss.
 */
export async function fromShared(
  shared: SharedAnswers | undefined, key: string, clock: () => number, ownMs: (value: string) => number,
): Promise<{ value: string; ttlMs: number } | undefined> {
  const asked = clock();
  const hit = await shared?.get(key);
  if (hit === undefined || hit.ttlMs > ownMs(hit.value)) return undefined;
  return { value: hit.value, ttlMs: hit.ttlMs - (clock() - asked) };
}

export interface StateResolverOptions {
  resolverUrl?: string;
  fetch: FetchLike;
  timeoutMs: number;
  publishedCacheMs: number;
  /** For "not published" and latest-state answers. */
  shortCacheMs: number;
  clock: () => number;
  maxBytes?: number;
  shared?: SharedAnswers;
}

export interface StateResolver {
  readonly configured: boolean;
  isPublished(did: string, stateHex: string): Promise<boolean>;
  /** Undefined when the resolver knows no published state. */
  latestState(did: string): Promise<string | undefined>;
}

export type StatePublication = Pick<StateResolver, 'isPublished'>;

const HASH_HEX = /^[0-9a-f]{64}$/;
export const DID_RESOLUTION_MEDIA_TYPE = 'application/did-resolution';
const NOT_FOUND_TYPE = 'https://www.w3.org/ns/did#NOT_FOUND';

const hexOf = (state: unknown): string | undefined => (typeof state === 'string' ? state.replace(/^0x/i, '').toLowerCase() : undefined);

/** An answer naming another DID or state is refused: a lying or broken resolver must not make a credential valid. */
function stateInfo(answer: unknown, did: string, stateHex?: string): Record<string, unknown> {
  const doc = isRecord(answer) ? answer.didDocument : undefined;
  const vm = isRecord(doc) && Array.isArray(doc.verificationMethod)
    ? doc.verificationMethod.find((m): m is Record<string, unknown> => isRecord(m) && m.type === 'Iden3StateInfo2023')
    : undefined;
  if (!isRecord(doc) || vm === undefined) throw new ResolverFailure('the DID resolver answered without Iden3StateInfo2023 state information');
  const info = isRecord(vm.info) ? vm.info : {};
  // A method's id is a DID URL (`{did}#state-info`), or relative to the document (`#state-info`).
  const methodDid = typeof vm.id === 'string' ? (vm.id.startsWith('#') ? undefined : vm.id.split('#')[0]) : vm.id;
  const named = [doc.id, vm.controller, methodDid, info.id];
  if (doc.id !== did || named.some((id) => id !== undefined && id !== did)) {
    throw new ResolverFailure('the DID resolver answered about another DID than the one asked');
  }
  if (stateHex !== undefined && vm.published === true && hexOf(info.state) !== hexOf(stateHex)) {
    throw new ResolverFailure('the DID resolver answered about another state than the one asked');
  }
  return vm;
}

function notFound(answer: unknown): boolean {
  if (!isRecord(answer)) return false;
  const meta = answer.didResolutionMetadata;
  if (!isRecord(meta)) return false;
  // W3C DID Resolution errors are objects; older resolvers answer a bare code.
  return meta.error === 'notFound' || (isRecord(meta.error) && meta.error.type === NOT_FOUND_TYPE);
}

/** A shared answer as stored (JSON drops `latest: undefined`); anything else is a miss. */
function answerOf(text: string): { published: boolean } | { latest: string | undefined } | undefined {
  let v: unknown;
  try { v = JSON.parse(text); } catch { return undefined; }
  if (!isRecord(v)) return undefined;
  if (typeof v.published === 'boolean') return { published: v.published };
  if (typeof v.latest === 'string' && HASH_HEX.test(v.latest)) return { latest: v.latest };
  return Object.keys(v).length === 0 ? { latest: undefined } : undefined;
}

export function createStateResolver(o: StateResolverOptions): StateResolver {
  const base = o.resolverUrl?.replace(/\/+$/, '');
  const cache = lruCache<string, { published: boolean } | { latest: string | undefined }>(4096, o.clock);
  type Answer = { published: boolean } | { latest: string | undefined };
  /**
   * Shared (REDIS_URL): the checked answers, never a document, for what is left of this instance's lifetime of them.
   * Redis is trusted as the resolver is: either could make a state count as published.
   */
  const keep = (key: string, value: Answer, ttl: number) => {
    keepFor(cache, key, value, ttl);
    if (ttl > 0) o.shared?.set(key, JSON.stringify(value), ttl);
  };
  const sharedAnswer = async (key: string): Promise<Answer | undefined> => {
    const hit = await fromShared(o.shared, key, o.clock, (v) => (answerOf(v) as { published?: boolean } | undefined)?.published === true ? o.publishedCacheMs : o.shortCacheMs);
    const answer = hit && answerOf(hit.value);
    if (hit === undefined || answer === undefined) return undefined;
    keepFor(cache, key, answer, hit.ttlMs);
    return answer;
  };
  const maxBytes = o.maxBytes ?? 256 * 1024;

  const get = async (did: string, stateHex?: string): Promise<unknown> => {
    if (base === undefined) throw new ResolverFailure('no DID resolver is configured (DID_RESOLVER_URL)');
    const url = `${base}/${encodeURIComponent(did)}${stateHex === undefined ? '' : `?state=${stateHex}`}`;
    try {
      return await fetchJson(o.fetch, { url, timeoutMs: o.timeoutMs, maxBytes, accept: DID_RESOLUTION_MEDIA_TYPE });
    } catch (e) {
      if (e instanceof FetchFailure && e.httpStatus === 404) return { didResolutionMetadata: { error: { type: NOT_FOUND_TYPE } } };
      if (e instanceof FetchFailure && e.httpStatus === 406) {
        throw new ResolverFailure(`the DID resolver does not serve DID resolution results (HTTP 406 to Accept: ${DID_RESOLUTION_MEDIA_TYPE})`);
      }
      throw new ResolverFailure(`the DID resolver did not answer: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  const pendingPublished = new Map<string, Promise<boolean>>();
  const pendingLatest = new Map<string, Promise<string | undefined>>();
  const once = <T>(pending: Map<string, Promise<T>>, key: string, run: () => Promise<T>): Promise<T> => {
    let p = pending.get(key);
    if (p === undefined) {
      p = run().finally(() => pending.delete(key));
      pending.set(key, p);
    }
    return p;
  };

  return {
    configured: base !== undefined,
    async isPublished(did, stateHex) {
      const key = `p\u0000${did}\u0000${stateHex}`;
      const hit = cache?.get(key);
      if (hit !== undefined && 'published' in hit) return hit.published;
      return once(pendingPublished, key, async () => {
        const known = await sharedAnswer(key);
        if (known !== undefined && 'published' in known) return known.published;
        const answer = await get(did, stateHex);
        let published: boolean;
        if (notFound(answer)) {
          published = false;
        } else {
          published = stateInfo(answer, did, stateHex).published === true;
        }
        keep(key, { published }, published ? o.publishedCacheMs : o.shortCacheMs);
        return published;
      });
    },
    async latestState(did) {
      const key = `l\u0000${did}`;
      const hit = cache?.get(key);
      if (hit !== undefined && 'latest' in hit) return hit.latest;
      return once(pendingLatest, key, async () => {
        const known = await sharedAnswer(key);
        if (known !== undefined && 'latest' in known) return known.latest;
        const answer = await get(did);
        let latest: string | undefined;
        if (notFound(answer)) {
          latest = undefined;
        } else {
          const vm = stateInfo(answer, did);
          const state = isRecord(vm.info) ? hexOf(vm.info.state) : undefined;
          if (vm.published !== true) latest = undefined;
          else if (state !== undefined && HASH_HEX.test(state)) latest = state;
          else throw new ResolverFailure('the DID resolver answered without the latest state of the issuer');
        }
        keep(key, { latest }, o.shortCacheMs);
        return latest;
      });
    },
  };
}
