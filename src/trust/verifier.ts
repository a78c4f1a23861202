/**
 * The credential verifier: for each presented credential, in this order (the first failure is the verdict):
 * 1. structure (credentialStatus, credentialSchema, issuer, types, a BJJSignature2021 proof) — structure.ts;
 * 2. trusted issuer — issuers.ts;
 * 3. holder binding — holder.ts;
 * 4. the proof (signature, issuer key and state, core claim match) — proof.ts, run in the cold verification pool
 *    (pool.ts: worker threads, bounded per tenant and in all) and cached per content: verified proofs in one cache,
 *    refusals in another (so that refusals, which anyone can make in any number, never evict a verified credential),
 *    refusals that hang on a changeable fact (an issuer state the resolver cannot answer for) for a short time;
 * 5. the issuer key's expiration (against the evaluation time);
 * 6. revocation of the credential and of the issuer's key, in parallel — revocation.ts, cached for a short time.
 * Cheap checks come first, so that untrusted, borrowed or oversized credentials cost no cryptography, and no URL named
 * by a credential is fetched before its issuer is trusted and its signing key shown to be that issuer's.
 */
import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import { contentHash } from './canonical.js';
import { createStateResolver, ResolverFailure } from './did-resolver.js';
import { createDocumentLoader, DocumentUnavailable } from './documents.js';
import { checkHolder } from './holder.js';
import { checkIssuer } from './issuers.js';
import { keep, lruCache } from '../domain/cache.js';
import { CredentialTooLarge, measureCredential } from './limits.js';
import { ColdPool, type Reservation } from './pool.js';
import { installFastPoseidon } from './poseidon.js';
import { coldCheck, type ColdTask, type VerifiedProof } from './proof.js';
import { createRevocationChecker, DEFAULT_STATUS_RESOLVERS, keyStatusFrom, type RevocationOutcome, type RevocationRequest } from './revocation.js';
import { checkStructure, notValid, OK, undecided, type Json } from './structure.js';
import type { CredentialVerifier, TrustDeps, TrustOptions, VerifyContext } from './types.js';

export const DEFAULTS = Object.freeze({
  timeoutMs: 3000,
  revocationCacheMs: 60_000,
  resolverCacheMs: 3_600_000,
  cacheSize: 10_000,
  maxResponseBytes: 1024 * 1024,
  /** How long a refusal that hangs on a changeable fact (issuer state unresolvable) is remembered, ms. */
  refusalCacheMs: 30_000,
  /** Credentials waiting for or in their first verification, in all and per tenant. */
  coldQueue: 256,
  coldPerTenant: 100,
  /** A credential to be verified may hold at most this many JSON bytes and scalar values (outside its proof). */
  maxCredentialBytes: 64 * 1024,
  maxCredentialLeaves: 256,
});

/** Round trips of one cold check to the request thread's I/O (an issuer state, JSON-LD documents) at most. */
const MAX_COLD_ROUNDS = 8;

/** A revocation question no status source the issuer signed can answer: nothing is requested. */
const UNSIGNED: RevocationOutcome = Object.freeze({ kind: 'unsigned' });

/**
 * The verdict of one revocation answer. `status` is the source that was asked (for the key: the credential's own,
 * signed status with the key's nonce, see keyStatusFrom); only a source the issuer signed is ever asked, so a failure
 * may name it. `ownSigned`: whether the credential's own status is covered by the signature.
 */
function describeRevocation(o: RevocationOutcome, status: Json, what: 'credential' | 'key', ownSigned: boolean): TrustVerdict {
  const type = String(status.type).slice(0, 100);
  const where = what === 'credential' ? 'credentialStatus' : "the issuer key's status (asked of the credential's credentialStatus)";
  switch (o.kind) {
    case 'unsigned':
      return what === 'credential' || !ownSigned
        ? undecided("its credentialStatus is not covered by the issuer's signature, so revocation cannot be checked (no unsigned status URL is used)")
        : undecided(`its credentialStatus (${type}) does not name the revocation nonce in a way that lets the signing key's status be asked of it, so the key's revocation cannot be checked`);
    case 'active':
      return OK;
    case 'revoked':
      return what === 'credential'
        ? notValid(`revoked by its issuer (${type})`)
        : notValid('its issuer has revoked the key that signed it');
    case 'unsupported':
      return undecided(`${where} type ${JSON.stringify(type)} is not supported, so revocation cannot be checked`);
    default:
      return undecided(`${where} (${type} at ${String(status.id).slice(0, 300)}) cannot be resolved: ${o.why}`);
  }
}

/** The checks that depend on content and address only, in the order they are reported. */
interface Shape {
  structure: TrustVerdict;
  holder: TrustVerdict;
}

const NOT_READ = notValid('not verified: no rule of this scenario reads its type');

function isRelevant(c: unknown, types: { has(type: string): boolean }): boolean {
  const t = (c as { type?: unknown } | null)?.type;
  return Array.isArray(t) && t.some((x) => typeof x === 'string' && types.has(x));
}

export function createCredentialVerifier(options: TrustOptions, deps: TrustDeps = {}): CredentialVerifier {
  const mode = options.mode;
  if (mode === 'off') {
    return {
      mode,
      async verify(credentials) {
        return credentials.map(() => OK);
      },
      stats: () => ({ coldChecks: 0, coldReserved: 0, coldCapacity: 0, verified: 0, refused: 0 }),
      warm() {},
      async close() {},
    };
  }
  // The revocation answers (Merkle proofs) are checked on this thread: with the same fast Poseidon as the cold checks.
  installFastPoseidon();
  const fetchImpl = deps.fetch ?? ((input, init) => fetch(input, init));
  const clock = deps.clock ?? Date.now;
  const timeoutMs = options.timeoutMs > 0 ? options.timeoutMs : DEFAULTS.timeoutMs;
  const maxBytes = options.maxResponseBytes ?? DEFAULTS.maxResponseBytes;
  const revocationCacheMs = Math.max(0, options.revocationCacheMs);
  const cacheSize = options.cacheSize ?? DEFAULTS.cacheSize;
  const requireHolderBinding = options.requireHolderBinding === true;
  const trusted = options.trustedIssuers;

  const documentLoader = createDocumentLoader({
    documents: options.documents,
    remoteDocumentPrefixes: options.remoteDocumentPrefixes,
    fetch: fetchImpl,
    timeoutMs,
    maxBytes,
  });
  const stateResolver = createStateResolver({
    resolverUrl: options.resolverUrl || undefined,
    fetch: fetchImpl,
    timeoutMs,
    publishedCacheMs: options.resolverCacheMs ?? DEFAULTS.resolverCacheMs,
    shortCacheMs: revocationCacheMs,
    clock,
    maxBytes,
  });
  const revocation = createRevocationChecker({
    io: { fetch: fetchImpl, timeoutMs, maxBytes, stateResolver },
    resolvers: { ...DEFAULT_STATUS_RESOLVERS, ...(deps.statusResolvers ?? {}) },
    revocationCacheMs,
    cacheSize,
    clock,
  });
  const refusalCacheMs = Math.max(0, options.refusalCacheMs ?? DEFAULTS.refusalCacheMs);
  const limits = {
    bytes: options.maxCredentialBytes ?? DEFAULTS.maxCredentialBytes,
    leaves: options.maxCredentialLeaves ?? DEFAULTS.maxCredentialLeaves,
  };
  // Verified proofs and refusals apart: a refusal never evicts a verified credential.
  const verified = lruCache<string, VerifiedProof>(cacheSize, clock);
  const refused = lruCache<string, VerifiedProof>(cacheSize, clock);
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

  const pool = new ColdPool({
    threads: options.threads ?? 0,
    maxQueued: options.coldQueue ?? DEFAULTS.coldQueue,
    perTenant: options.coldPerTenant ?? DEFAULTS.coldPerTenant,
    documents: options.documents,
    inline: (task) => coldCheck(task, { documentLoader }),
  });

  /** The cold check of one credential through the pool, with the I/O it asks for done here, between its rounds. */
  const coldProof = async (c: Json, reservation: Reservation): Promise<VerifiedProof> => {
    let task: ColdTask = { credential: c };
    for (let round = 0; round < MAX_COLD_ROUNDS; round++) {
      const r = await reservation.run(task);
      if (r.kind === 'done') return r.proof;
      if (r.kind === 'state') {
        let published: boolean;
        try {
          published = await stateResolver.isPublished(r.issuerDid, r.state);
        } catch (e) {
          const why = e instanceof ResolverFailure ? e.message : 'the DID resolver answer could not be read';
          return { verdict: undecided(`the issuer state in its proof cannot be checked: ${why}`), cacheable: false };
        }
        if (!published) {
          return { verdict: notValid("the issuer state in its proof is neither the issuer's genesis state nor a published one"), cacheable: false };
        }
        task = { ...task, statePublished: true };
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

  // Keyed by the content digest alone: it covers the whole credential, id included. The caller's digests are the same
  // string objects request after request (execute remembers them per body), so a lookup hashes nothing new.
  const proofOf = (c: Json, key: string, reservation: Reservation | undefined): Promise<VerifiedProof> => {
    const hit = cachedProof(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let p = pendingProofs.get(key);
    if (p === undefined) {
      // Admitted with the request (verify reserves a slot for each credential it finds neither cached nor pending).
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

  // Structure and holder binding depend only on the content and the request's address: remembered per digest, for the
  // address it was last presented with (a credential comes back with its holder's address), when the caller hands in
  // digests, as the proof is per content.
  const shapes = lruCache<string, { address: string; shape: Shape }>(cacheSize, clock);
  const shapeOf = (credential: Credential, address: string): Shape => {
    const structure = checkStructure(credential);
    return structure.ok
      ? { structure, holder: checkHolder((credential as unknown as Json).credentialSubject as Json, address, requireHolderBinding) }
      : { structure, holder: structure };
  };

  /** The checks before the proof (relevance, structure, issuer, holder), in order: the first failure, or undefined. */
  const precheck = (credential: Credential, ctx: VerifyContext, digest: string | undefined): TrustVerdict | undefined => {
    if (ctx.relevantTypes !== undefined && !isRelevant(credential, ctx.relevantTypes)) return NOT_READ;
    let shape: Shape | undefined;
    if (digest === undefined) {
      shape = shapeOf(credential, ctx.address);
    } else {
      const known = shapes?.get(digest);
      if (known !== undefined && known.address === ctx.address) {
        shape = known.shape;
      } else {
        shape = shapeOf(credential, ctx.address);
        keep(shapes, digest, { address: ctx.address, shape });
      }
    }
    if (!shape.structure.ok) return shape.structure;
    const issuer = checkIssuer((credential as unknown as Json).issuer as string, trusted, ctx.trustedIssuers);
    if (!issuer.ok) return issuer;
    if (!shape.holder.ok) return shape.holder;
    return undefined;
  };

  // Made once per verified proof: the proof is per content digest, and the requests depend only on that content (so
  // the revocation cache keys them without rebuilding its key each time).
  const requestsByProof = new WeakMap<VerifiedProof, [RevocationRequest | undefined, RevocationRequest | undefined]>();
  /**
   * The two revocation questions of a credential whose proof verified: its own status, and its issuer key's, both put
   * to the status source the issuer signed (keyStatusFrom). Undefined for a question no signed source can be asked:
   * the service then requests nothing, and the answer is undecided (never valid).
   */
  const revocationRequests = (c: Json, proof: VerifiedProof): [RevocationRequest | undefined, RevocationRequest | undefined] => {
    let requests = requestsByProof.get(proof);
    if (requests === undefined) {
      const issuerDid = c.issuer as string;
      const subjectId = (c.credentialSubject as Json).id;
      const own = c.credentialStatus as Json;
      const keyStatus = proof.statusSigned === true ? keyStatusFrom(own, proof.nonce as bigint, proof.keyNonce as bigint) : undefined;
      requests = [
        proof.statusSigned === true
          ? { status: own, nonce: proof.nonce as bigint, issuerDid, holderDid: typeof subjectId === 'string' ? subjectId : issuerDid }
          : undefined,
        keyStatus === undefined ? undefined : { status: keyStatus, nonce: proof.keyNonce as bigint, issuerDid, holderDid: issuerDid },
      ];
      requestsByProof.set(proof, requests);
    }
    return requests;
  };
  const check = (r: RevocationRequest | undefined): Promise<RevocationOutcome> => (r === undefined ? Promise.resolve(UNSIGNED) : revocation.check(r));
  const known = (r: RevocationRequest | undefined): RevocationOutcome | undefined => (r === undefined ? UNSIGNED : revocation.known(r));

  /** The verdict once the proof and both revocation answers are known. */
  const conclude = (
    c: Json, proof: VerifiedProof, own: RevocationOutcome, key: RevocationOutcome, keyRequest: RevocationRequest | undefined,
  ): TrustVerdict => {
    const signed = proof.statusSigned === true;
    const ownStatus = c.credentialStatus as Json;
    const ownVerdict = describeRevocation(own, ownStatus, 'credential', signed);
    const keyVerdict = describeRevocation(key, keyRequest?.status ?? ownStatus, 'key', signed);
    // A definite answer wins over an undecided one.
    if (!ownVerdict.ok && ownVerdict.status === 'not-valid') return ownVerdict;
    if (!keyVerdict.ok && keyVerdict.status === 'not-valid') return keyVerdict;
    if (!ownVerdict.ok) return ownVerdict;
    return keyVerdict;
  };

  /** An invalid proof, or an expired issuer key: the verdict before revocation, or undefined to go on. */
  const proofFailure = (proof: VerifiedProof, now: number): TrustVerdict | undefined => {
    if (!proof.verdict.ok) return proof.verdict;
    if (proof.keyExpiresAt !== undefined && !(proof.keyExpiresAt > now)) return notValid('the issuer key that signed it has expired');
    return undefined;
  };

  const verifyOne = async (c: Json, ctx: VerifyContext, key: string, reservation: Reservation | undefined): Promise<TrustVerdict> => {
    const proof = await proofOf(c, key, reservation);
    const failed = proofFailure(proof, ctx.now);
    if (failed !== undefined) return failed;
    const [ownRequest, keyRequest] = revocationRequests(c, proof);
    const [own, key2] = await Promise.all([check(ownRequest), check(keyRequest)]);
    return conclude(c, proof, own, key2, keyRequest);
  };

  /**
   * The same verdict without waiting, when everything it needs is at hand (a credential seen before: its proof and
   * revocation answers are cached), else undefined. Only with the caller's digest, which keys the proof cache.
   */
  const verifyKnown = (credential: Credential, ctx: VerifyContext, digest: string | undefined): TrustVerdict | undefined => {
    if (digest === undefined) return undefined;
    const early = precheck(credential, ctx, digest);
    if (early !== undefined) return early;
    const c = credential as unknown as Json;
    const proof = cachedProof(digest);
    if (proof === undefined) return undefined;
    const failed = proofFailure(proof, ctx.now);
    if (failed !== undefined) return failed;
    const [ownRequest, keyRequest] = revocationRequests(c, proof);
    const own = known(ownRequest);
    const key = own === undefined ? undefined : known(keyRequest);
    return key === undefined ? undefined : conclude(c, proof, own!, key, keyRequest);
  };

  /**
   * Every credential in order: the checks before the proof, then the size limits of those whose proof is neither
   * cached nor being checked (a CredentialTooLarge names the first one over a limit), then one reservation in the cold
   * pool for all of them (ColdWorkRefused when the tenant or the service has no room: nothing was started), then the
   * proofs and revocation answers.
   */
  const verifySlow = async (credentials: readonly Credential[], ctx: VerifyContext): Promise<TrustVerdict[]> => {
    const verdicts: TrustVerdict[] = new Array(credentials.length);
    const keys: string[] = new Array(credentials.length);
    const cold = new Set<string>();
    let i = -1;
    for (const credential of credentials) {
      i += 1;
      try {
        const early = precheck(credential, ctx, ctx.digests?.[i]);
        if (early !== undefined) {
          verdicts[i] = early;
          continue;
        }
        const key = ctx.digests?.[i] ?? contentHash(credential);
        keys[i] = key;
        if (cold.has(key) || cachedProof(key) !== undefined || pendingProofs.has(key)) continue;
        const size = measureCredential(credential, limits);
        if (size !== undefined) throw new CredentialTooLarge(i, size, limits);
        cold.add(key);
      } catch (e) {
        if (e instanceof CredentialTooLarge) throw e;
        verdicts[i] = undecided('its verification failed unexpectedly');
      }
    }
    const reservation = cold.size > 0 ? pool.reserve(ctx.tenant ?? '', cold.size) : undefined;
    try {
      await Promise.all(
        credentials.map(async (credential, i) => {
          if (verdicts[i] !== undefined) return;
          // Every credential without a verdict has its key from the loop above.
          const key = keys[i];
          verdicts[i] = key === undefined
            ? undecided('its verification failed unexpectedly')
            : await verifyOne(credential as unknown as Json, ctx, key, reservation).catch(
              (): TrustVerdict => undecided('its verification failed unexpectedly'),
            );
        }),
      );
    } finally {
      reservation?.release();
    }
    return verdicts;
  };

  return {
    mode,
    async verify(credentials, ctx) {
      if (!Array.isArray(credentials)) return [];
      // Credentials seen before are decided without a promise each; the first one that needs I/O sends all the
      // way round (each is cheap to decide again).
      const known: TrustVerdict[] = new Array(credentials.length);
      let i = 0;
      try {
        for (; i < credentials.length; i++) {
          const v = verifyKnown(credentials[i], ctx, ctx.digests?.[i]);
          if (v === undefined) break;
          known[i] = v;
        }
      } catch {
        i = -1; // decided below, where a failure becomes an undecided verdict
      }
      if (i === credentials.length) return known;
      return verifySlow(credentials, ctx);
    },
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
