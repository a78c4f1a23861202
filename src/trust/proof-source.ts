/** Refusals are cached apart: anyone can make them in any number, and they must never evict a verified credential. */
import { ResolverFailure, type StatePublication } from './did-resolver.js';
import { DocumentUnavailable, type DocumentLoader } from '../jsonld/documents.js';
import { keep, lruCache } from '../domain/cache.js';
import type { ColdWorkRefused } from './errors.js';
import { ColdPool, type ColdPoolOptions, type Reservation } from './pool.js';
import { coldCheck, type ColdTask, type VerifiedProof } from './proof.js';
import { stateKey } from './proof-check.js';
import { undecided, type Json } from './structure.js';
import type { VerifierStats } from './types.js';

/** Round trips of one cold check to the request thread's I/O (an issuer state, JSON-LD documents) at most. */
const MAX_COLD_ROUNDS = 8;

export interface ProofSourceOptions {
  cacheSize: number;
  clock: () => number;
  /** How long a refusal that hangs on a changeable fact (an unresolvable issuer state) is kept. */
  refusalCacheMs: number;
  pool: Omit<ColdPoolOptions, 'inline'>;
  documentLoader: DocumentLoader;
  publication: StatePublication;
}

export interface ProofSource {
  cached(key: string): VerifiedProof | undefined;
  /** Cached or being checked: it needs no slot in the pool. */
  has(key: string): boolean;
  reserve(tenant: string, n: number): Reservation;
  atBudget(tenant: string): ColdWorkRefused | undefined;
  /** A failure is an undecided verdict. */
  get(c: Json, key: string, reservation: Reservation | undefined): Promise<VerifiedProof>;
  stats(): VerifierStats;
  warm(): void;
  close(): Promise<void>;
}

export function createProofSource(o: ProofSourceOptions): ProofSource {
  const { documentLoader, publication, refusalCacheMs } = o;
  const verified = lruCache<string, VerifiedProof>(o.cacheSize, o.clock);
  const refused = lruCache<string, VerifiedProof>(o.cacheSize, o.clock);
  const cachedProof = (key: string): VerifiedProof | undefined => verified?.get(key) ?? refused?.get(key);
  const remember = (key: string, r: VerifiedProof): void => {
    if (r.verdict.ok) {
      if (r.cacheable) keep(verified, key, r);
    } else {
      keep(refused, key, r, r.cacheable ? Infinity : refusalCacheMs);
    }
  };
  const pendingProofs = new Map<string, Promise<VerifiedProof>>();
  let coldChecks = 0;

  const pool = new ColdPool({ ...o.pool, inline: (task) => coldCheck(task, { documentLoader }) });

  const coldProof = async (c: Json, reservation: Reservation): Promise<VerifiedProof> => {
    let task: ColdTask = { credential: c };
    for (let round = 0; round < MAX_COLD_ROUNDS; round++) {
      const r = await reservation.run(task);
      if (r.kind === 'done') return r.proof;
      if (r.refused !== undefined) task = { ...task, refused: r.refused };
      if (r.kind === 'state') {
        if (task.states?.[stateKey(r.issuerDid, r.state)] !== undefined) break; // answered already: a bug, not a loop
        let answer: boolean | string;
        try {
          answer = await publication.isPublished(r.issuerDid, r.state);
        } catch (e) {
          answer = e instanceof ResolverFailure ? e.message : 'the DID resolver answer could not be read';
        }
        task = { ...task, states: { ...task.states, [stateKey(r.issuerDid, r.state)]: answer } };
        continue;
      }
      if (task.documents?.[r.url] !== undefined) break; // handed in already: the thread cannot use it
      try {
        const doc = await documentLoader(r.url);
        task = { ...task, documents: { ...task.documents, [r.url]: JSON.stringify(doc.document) } };
      } catch (e) {
        const message = e instanceof DocumentUnavailable ? e.message : `JSON-LD document ${r.url} could not be loaded`;
        return { verdict: undecided(`its proof cannot be checked: ${message}`), cacheable: false };
      }
    }
    return { verdict: undecided('its proof cannot be checked: it needs more JSON-LD documents than one verification loads'), cacheable: false };
  };

  // Keyed by the content digest alone: it covers the whole credential, id included.
  const proofOf = (c: Json, key: string, reservation: Reservation | undefined): Promise<VerifiedProof> => {
    const hit = cachedProof(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let p = pendingProofs.get(key);
    if (p === undefined) {
      if (reservation === undefined) return Promise.resolve({ verdict: undecided('its verification failed unexpectedly'), cacheable: false });
      coldChecks++;
      p = coldProof(c, reservation)
        .catch((): VerifiedProof => ({ verdict: undecided('its proof could not be checked (unexpected failure)'), cacheable: false }))
        .then((r) => {
          remember(key, r);
          return r;
        })
        .finally(() => pendingProofs.delete(key));
      pendingProofs.set(key, p);
    }
    return p;
  };

  return {
    cached: cachedProof,
    has: (key) => cachedProof(key) !== undefined || pendingProofs.has(key),
    reserve: (tenant, n) => pool.reserve(tenant, n),
    atBudget: (tenant) => pool.atBudget(tenant),
    get: proofOf,
    stats() {
      const load = pool.load;
      return { coldChecks, coldReserved: load.reserved, coldCapacity: load.capacity, verified: verified?.size ?? 0, refused: refused?.size ?? 0 };
    },
    warm() {
      pool.warm();
    },
    close() {
      return pool.close();
    },
  };
}
