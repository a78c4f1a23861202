/**
 * Longer than 300 lines: the resolvers of the three status types and the checker that caches them are one protocol.
 * Every answer is verified, not believed. "Revoked" is cached for good (revocation is permanent in iden3 trees).
 */
import { randomUUID } from 'node:crypto';
import { poseidon } from '@iden3/js-crypto';
import { fromShared, ResolverFailure, type SharedAnswers, type StateResolver } from './did-resolver.js';
import { DID, Hash, isGenesisState, Proof, testBit, validateTreeState, verifyProof, type Hash as HashT, type Proof as ProofT } from './iden3.js';
import { fetchJson, FetchFailure, type FetchLike } from './http.js';
import { keep, lruCache } from '../domain/cache.js';
import { isHttpUrl, STATUS_TYPES, type Json } from './structure.js';
import { isRecord } from '../schemas/json.js';

export class StatusFailure extends Error {
  override name = 'StatusFailure';
}

export type StatusJson = Json & { id: string; type: string };

export interface RevocationRequest {
  status: StatusJson;
  nonce: bigint;
  issuerDid: string;
  /** The `from` of agent requests: credentialSubject.id, else the issuer's DID. */
  holderDid: string;
}

export interface StatusIo {
  fetch: FetchLike;
  timeoutMs: number;
  maxBytes: number;
  stateResolver: StateResolver;
}

/** Throws when it cannot be told. */
export type StatusResolverFn = (request: RevocationRequest, io: StatusIo) => Promise<boolean>;

const HASH_HEX = /^[0-9a-f]{64}$/;

function hashHex(x: unknown): x is string {
  return typeof x === 'string' && HASH_HEX.test(x);
}

const optionalHashHex = (x: unknown): x is string | undefined => x === undefined || hashHex(x);

export async function verifyStatusAnswer(answer: unknown, nonce: bigint): Promise<boolean> {
  if (!isRecord(answer) || !isRecord(answer.issuer) || !isRecord(answer.mtp)) {
    throw new StatusFailure('the answer is not a revocation status ({ mtp, issuer })');
  }
  const issuer = answer.issuer;
  const { state, claimsTreeRoot, revocationTreeRoot, rootOfRoots } = issuer;
  if (!hashHex(state) || !hashHex(revocationTreeRoot) || !optionalHashHex(claimsTreeRoot) || !optionalHashHex(rootOfRoots)) {
    throw new StatusFailure("the answer's issuer state and tree roots are not 32-byte hex hashes");
  }
  if (!validateTreeState({ state, claimsTreeRoot, revocationTreeRoot, rootOfRoots })) {
    throw new StatusFailure("the answer's issuer state is not the hash of its tree roots");
  }
  let mtp: ProofT;
  try {
    mtp = Proof.fromJSON(answer.mtp);
  } catch {
    throw new StatusFailure("the answer's Merkle proof is malformed");
  }
  let valid: boolean;
  try {
    valid = await verifyProof(Hash.fromHex(revocationTreeRoot), mtp, nonce, 0n);
  } catch {
    valid = false;
  }
  if (!valid) throw new StatusFailure("the answer's Merkle proof does not verify against its revocation tree root for this nonce");
  return mtp.existence;
}

const smt: StatusResolverFn = async ({ status, nonce }, io) => {
  const answer = await fetchJson(io.fetch, { url: status.id, timeoutMs: io.timeoutMs, maxBytes: io.maxBytes });
  return verifyStatusAnswer(answer, nonce);
};

const agent: StatusResolverFn = async ({ status, nonce, issuerDid, holderDid }, io) => {
  const message = {
    id: randomUUID(),
    thid: randomUUID(),
    typ: 'application/iden3comm-plain-json',
    type: 'https://iden3-communication.io/revocation/1.0/request-status',
    body: { revocation_nonce: Number(nonce) },
    from: holderDid,
    to: issuerDid,
  };
  const answer = await fetchJson(io.fetch, { url: status.id, method: 'POST', body: message, timeoutMs: io.timeoutMs, maxBytes: io.maxBytes });
  if (!isRecord(answer)) throw new StatusFailure('the agent answered something other than an iden3comm message');
  return verifyStatusAnswer(answer.body, nonce);
};

interface RhsNode {
  children: HashT[];
}

async function rhsNode(io: StatusIo, base: string, hash: HashT): Promise<RhsNode> {
  const answer = await fetchJson(io.fetch, { url: `${base}/node/${hash.hex()}`, timeoutMs: io.timeoutMs, maxBytes: io.maxBytes });
  const node = isRecord(answer) ? answer.node : undefined;
  const hexes: unknown = isRecord(node) ? node.children : undefined;
  if (!Array.isArray(hexes) || !hexes.every(hashHex)) {
    throw new StatusFailure('the reverse hash service answered a malformed node');
  }
  const children = hexes.map((h) => Hash.fromHex(h));
  // Each node must hash to the key it was asked by, so that no answer can be made up.
  if (poseidon.hash(children.map((c) => c.bigInt())) !== hash.bigInt()) {
    throw new StatusFailure('the reverse hash service answered a node that does not hash to the requested key');
  }
  return { children };
}

const ONE = Hash.fromBigInt(1n);

async function rhsStatus(io: StatusIo, base: string, state: HashT, nonce: bigint): Promise<boolean> {
  const roots = (await rhsNode(io, base, state)).children;
  const [claimsTreeRoot, revocationTreeRoot, rootOfRoots] = roots;
  if (roots.length !== 3 || claimsTreeRoot === undefined || revocationTreeRoot === undefined || rootOfRoots === undefined) {
    throw new StatusFailure('the reverse hash service answered a state node without three roots');
  }
  const key = Hash.fromBigInt(nonce);
  const siblings: HashT[] = [];
  let existence = false;
  let nodeAux: { key: HashT; value: HashT } | undefined;
  let next = revocationTreeRoot;
  for (let depth = 0; ; depth++) {
    if (depth >= 64) throw new StatusFailure('the revocation tree in the reverse hash service is deeper than 64 levels');
    if (next.bigInt() === 0n) break;
    // A leaf is (key, value, 1), a middle node (left, right): anything else is refused.
    const { children } = await rhsNode(io, base, next);
    const [first, second, third] = children;
    const leaf = children.length === 3 && third !== undefined && third.bigInt() === ONE.bigInt();
    if (first === undefined || second === undefined || (!leaf && children.length !== 2)) {
      throw new StatusFailure('the reverse hash service answered an unexpected node in the revocation tree');
    }
    if (leaf) {
      if (first.bigInt() === key.bigInt()) existence = true;
      else nodeAux = { key: first, value: second };
      break;
    }
    if (testBit(key.bytes, depth)) {
      siblings.push(first);
      next = second;
    } else {
      siblings.push(second);
      next = first;
    }
  }
  return verifyStatusAnswer(
    {
      mtp: new Proof({ siblings, existence, nodeAux }).toJSON(),
      issuer: { state: state.hex(), claimsTreeRoot: claimsTreeRoot.hex(), revocationTreeRoot: revocationTreeRoot.hex(), rootOfRoots: rootOfRoots.hex() },
    },
    nonce,
  );
}

function stateParam(id: string): string | undefined {
  try {
    const s = new URL(id).searchParams.get('state');
    return s !== null && HASH_HEX.test(s) ? s : undefined;
  } catch {
    return undefined;
  }
}

const rhs: StatusResolverFn = async (request, io) => {
  const { status, nonce, issuerDid } = request;
  const id = status.id;
  const nodePath = id.indexOf('/node');
  const base = (nodePath < 0 ? id : id.slice(0, nodePath)).replace(/\/+$/, '');
  const viaRhs = async (): Promise<boolean> => {
    let latest: string | undefined;
    if (io.stateResolver.configured) latest = await io.stateResolver.latestState(issuerDid);
    if (latest === undefined) {
      // Only a genesis state named in the URL stands for the latest, once the resolver says nothing was published.
      const param = stateParam(status.id);
      let genesis = false;
      try {
        genesis = param !== undefined && isGenesisState(DID.parse(issuerDid), param);
      } catch {
        genesis = false;
      }
      if (!io.stateResolver.configured) {
        throw new StatusFailure("the issuer's latest state is needed and no DID resolver is configured (DID_RESOLVER_URL)");
      }
      if (!genesis || param === undefined) {
        throw new StatusFailure('the DID resolver knows no published state of the issuer and the status URL names no genesis state');
      }
      latest = param;
    }
    return rhsStatus(io, base, Hash.fromHex(latest), nonce);
  };
  try {
    return await viaRhs();
  } catch (e) {
    const fallback = status.statusIssuer;
    if (isRecord(fallback) && isHttpUrl(fallback.id)) {
      const { id, type } = fallback;
      if (type === STATUS_TYPES.SparseMerkleTreeProof) return smt({ ...request, status: { ...fallback, id, type } }, io);
      if (type === STATUS_TYPES.Iden3commRevocationStatusV1) return agent({ ...request, status: { ...fallback, id, type } }, io);
    }
    throw e;
  }
};

/**
 * The credential's own, signed status with the key's nonce (an issuer keeps auth claims and credentials in one
 * revocation tree), never the proof's issuerData status, which no signature covers.
 */
export function keyStatusFrom(own: Json, ownNonce: bigint, keyNonce: bigint): StatusJson | undefined {
  const { id, type } = own;
  if (typeof id !== 'string' || typeof type !== 'string') return undefined;
  const param = /(?<=[?&]revocationNonce=)\d+(?=&|#|$)/.exec(id);
  if (param) return BigInt(param[0]) === ownNonce ? { ...own, type, id: `${id.slice(0, param.index)}${keyNonce}${id.slice(param.index + param[0].length)}` } : undefined;
  if (type === STATUS_TYPES.SparseMerkleTreeProof) {
    const suffix = `/${ownNonce}`;
    return id.endsWith(suffix) ? { ...own, type, id: `${id.slice(0, -suffix.length)}/${keyNonce}` } : undefined;
  }
  if (isRecord(own.statusIssuer) && own.statusIssuer.type === STATUS_TYPES.SparseMerkleTreeProof) {
    // A reverse hash service with an issuer fallback: the fallback's URL names the nonce too.
    const fallback = keyStatusFrom(own.statusIssuer, ownNonce, keyNonce);
    const { statusIssuer: _dropped, ...rest } = own;
    return fallback ? { ...own, id, type, statusIssuer: fallback } : { ...rest, id, type };
  }
  return { ...own, id, type };
}

export const DEFAULT_STATUS_RESOLVERS = Object.freeze({
  [STATUS_TYPES.SparseMerkleTreeProof]: smt,
  [STATUS_TYPES.Iden3commRevocationStatusV1]: agent,
  [STATUS_TYPES.Iden3ReverseSparseMerkleTreeProof]: rhs,
} satisfies Record<string, StatusResolverFn>);

export interface RevocationCheckerOptions {
  io: StatusIo;
  resolvers: Readonly<Record<string, StatusResolverFn>>;
  revocationCacheMs: number;
  cacheSize: number;
  clock: () => number;
  /**
   * REDIS_URL's: an answer verified by one instance, for the others, for what is left of its lifetime there. "Revoked",
   * kept for good in process, is shared for a day: a bound on Redis's memory, never on what is believed.
   */
  shared?: SharedAnswers;
}

const SHARED_REVOKED_MS = 86_400_000;

export type RevocationOutcome = { kind: 'revoked' } | { kind: 'active' } | { kind: 'unsupported' } | { kind: 'unsigned' } | { kind: 'failed'; why: string };

export interface RevocationChecker {
  check(request: RevocationRequest): Promise<RevocationOutcome>;
  known(request: RevocationRequest): RevocationOutcome | undefined;
}

const REVOKED: RevocationOutcome = Object.freeze({ kind: 'revoked' });
const ACTIVE: RevocationOutcome = Object.freeze({ kind: 'active' });
const UNSUPPORTED: RevocationOutcome = Object.freeze({ kind: 'unsupported' });

export function createRevocationChecker(o: RevocationCheckerOptions): RevocationChecker {
  const cache = lruCache<string, boolean>(o.cacheSize, o.clock);
  const pending = new Map<string, Promise<RevocationOutcome>>();
  const hasOwn = Object.prototype.hasOwnProperty;
  const resolverOf = (type: string) => (hasOwn.call(o.resolvers, type) ? o.resolvers[type] : undefined);
  // Per request object: the verifier hands in the same objects for a known credential, so a hit builds no key.
  const keys = new WeakMap<RevocationRequest, string>();
  const keyOf = (request: RevocationRequest) => {
    let key = keys.get(request);
    if (key === undefined) {
      key = `${String(request.status.type)}\u0000${String(request.status.id)}\u0000${request.nonce}\u0000${request.issuerDid}`;
      keys.set(request, key);
    }
    return key;
  };
  return {
    known(request) {
      if (resolverOf(request.status.type) === undefined) return UNSUPPORTED;
      const hit = cache?.get(keyOf(request));
      return hit === undefined ? undefined : hit ? REVOKED : ACTIVE;
    },
    check(request) {
      const resolver = resolverOf(request.status.type);
      if (resolver === undefined) return Promise.resolve(UNSUPPORTED);
      const key = keyOf(request);
      const hit = cache?.get(key);
      if (hit !== undefined) return Promise.resolve(hit ? REVOKED : ACTIVE);
      let p = pending.get(key);
      if (p === undefined) {
        p = (async (): Promise<RevocationOutcome> => {
          try {
            const known = await fromShared(o.shared, key, o.clock, (v) => (v === '1' ? SHARED_REVOKED_MS : o.revocationCacheMs));
            if (known !== undefined && (known.value === '1' || known.value === '0')) {
              keep(cache, key, known.value === '1', known.ttlMs);
              return known.value === '1' ? REVOKED : ACTIVE;
            }
            const revoked = await resolver(request, o.io);
            keep(cache, key, revoked, revoked ? Infinity : o.revocationCacheMs);
            if (o.revocationCacheMs > 0 || revoked) o.shared?.set(key, revoked ? '1' : '0', revoked ? SHARED_REVOKED_MS : o.revocationCacheMs, !revoked);
            return revoked ? REVOKED : ACTIVE;
          } catch (e) {
            const why = e instanceof StatusFailure || e instanceof FetchFailure || e instanceof ResolverFailure
              ? e.message
              : 'the answer could not be processed';
            return { kind: 'failed', why };
          } finally {
            pending.delete(key);
          }
        })();
        pending.set(key, p);
      }
      return p;
    },
  };
}
