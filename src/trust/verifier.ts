/**
 * The credential verifier: for each presented credential, in this order (the first failure is the verdict):
 * 1. structure (credentialStatus, credentialSchema, issuer, types, a proof of a supported type) — structure.ts,
 *    proof-types.ts;
 * 2. trusted issuer — issuers.ts;
 * 3. holder binding — holder.ts;
 * 4. the proof (one supported proof that verifies: proof.ts, the proof types of proof-types.ts), run in the cold verification pool
 *    (pool.ts: worker threads, bounded per tenant and in all) and cached per content — proof-source.ts: verified proofs
 *    in one cache, refusals in another (so that refusals, which anyone can make in any number, never evict a verified
 *    credential), refusals that hang on a changeable fact (an issuer state the resolver cannot answer for) for a short
 *    time;
 * 5. the issuer key's expiration (against the evaluation time);
 * 6. revocation of the credential and of the issuer's key, in parallel — revocation.ts (cached for a short time), the
 *    verdict worded by revocation-verdict.ts.
 * Cheap checks come first, so that untrusted, borrowed or oversized credentials cost no cryptography, and no URL named
 * by a credential is fetched before its issuer is trusted and its signing key shown to be that issuer's.
 */
import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import { contentHash } from './canonical.js';
import { createStateResolver } from './did-resolver.js';
import { createDocumentLoader } from '../jsonld/documents.js';
import { checkHolder } from './holder.js';
import { checkIssuer } from './issuers.js';
import { keep, lruCache } from '../domain/cache.js';
import { CredentialTooLarge } from './errors.js';
import { measureCredential } from './limits.js';
import type { Reservation } from './pool.js';
import { installFastPoseidon } from './poseidon.js';
import type { VerifiedProof } from './proof.js';
import { checkProofStructure } from './proof-types.js';
import { createProofSource } from './proof-source.js';
import { createRevocationChecker, DEFAULT_STATUS_RESOLVERS } from './revocation.js';
import { createRevocationVerdicts } from './revocation-verdict.js';
import { checkStructure, notValid, OK, undecided } from './structure.js';
import { isRecord } from '../schemas/json.js';
import type { CredentialVerifier, TrustDeps, TrustOptions, VerifyContext } from './types.js';

/** The largest answer accepted from any outgoing request (status, DID resolver, remote JSON-LD document). */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** The checks that depend on content and address only, in the order they are reported. */
interface Shape {
  structure: TrustVerdict;
  holder: TrustVerdict;
}

const NOT_READ = notValid('not verified: no rule of this scenario reads its type');

function isRelevant(c: unknown, types: { has(type: string): boolean }): boolean {
  const t = isRecord(c) ? c.type : undefined;
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
      coldRefusal: () => undefined,
      stats: () => ({ coldChecks: 0, coldReserved: 0, coldCapacity: 0, verified: 0, refused: 0 }),
      warm() {},
      async close() {},
    };
  }
  // The revocation answers (Merkle proofs) are checked on this thread: with the same fast Poseidon as the cold checks.
  installFastPoseidon();
  const fetchImpl = deps.fetch ?? ((input, init) => fetch(input, init));
  const clock = deps.clock ?? Date.now;
  const { timeoutMs, cacheSize, requireHolderBinding, trustedIssuers: trusted } = options;
  const revocationCacheMs = Math.max(0, options.revocationCacheMs);

  const documentLoader = createDocumentLoader({
    documents: options.documents,
    remoteDocumentPrefixes: options.remoteDocumentPrefixes,
    fetch: fetchImpl,
    timeoutMs,
    maxBytes: MAX_RESPONSE_BYTES,
  });
  const stateResolver = createStateResolver({
    resolverUrl: options.resolverUrl || undefined,
    fetch: fetchImpl,
    timeoutMs,
    publishedCacheMs: options.resolverCacheMs,
    shortCacheMs: revocationCacheMs,
    clock,
    maxBytes: MAX_RESPONSE_BYTES,
  });
  const revocations = createRevocationVerdicts(createRevocationChecker({
    io: { fetch: fetchImpl, timeoutMs, maxBytes: MAX_RESPONSE_BYTES, stateResolver },
    resolvers: { ...DEFAULT_STATUS_RESOLVERS, ...(deps.statusResolvers ?? {}) },
    revocationCacheMs,
    cacheSize,
    clock,
  }));
  const proofs = createProofSource({
    cacheSize,
    clock,
    refusalCacheMs: Math.max(0, options.refusalCacheMs),
    pool: {
      threads: options.threads,
      maxQueued: options.coldQueue,
      perTenant: options.coldPerTenant,
      documents: options.documents,
    },
    documentLoader,
    publication: deps.statePublication?.(stateResolver) ?? stateResolver,
  });
  const limits = { bytes: options.maxCredentialBytes, leaves: options.maxCredentialLeaves };

  // Structure and holder binding depend only on the content and the request's address: remembered per digest, for the
  // address it was last presented with (a credential comes back with its holder's address), when the caller hands in
  // digests, as the proof is per content.
  const shapes = lruCache<string, { address: string; shape: Shape }>(cacheSize, clock);
  const shapeOf = (credential: Credential, address: string): Shape => {
    const structure = checkStructure(credential, checkProofStructure);
    return structure.ok
      ? { structure, holder: checkHolder(credential.credentialSubject, address, requireHolderBinding) }
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
    const issuer = checkIssuer(credential.issuer, trusted, ctx.trustedIssuers);
    if (!issuer.ok) return issuer;
    if (!shape.holder.ok) return shape.holder;
    return undefined;
  };

  /** An invalid proof, or an expired issuer key: the verdict before revocation, or undefined to go on. */
  const proofFailure = (proof: VerifiedProof, now: number): TrustVerdict | undefined => {
    if (!proof.verdict.ok) return proof.verdict;
    if (proof.keyExpiresAt !== undefined && !(proof.keyExpiresAt > now)) return notValid('the issuer key that signed it has expired');
    return undefined;
  };

  const verifyOne = async (c: Credential, ctx: VerifyContext, key: string, reservation: Reservation | undefined): Promise<TrustVerdict> => {
    const proof = await proofs.get(c, key, reservation);
    const failed = proofFailure(proof, ctx.now);
    if (failed !== undefined) return failed;
    const [ownRequest, keyRequest] = revocations.requests(c, proof);
    const [own, key2] = await Promise.all([revocations.check(ownRequest), revocations.check(keyRequest)]);
    return revocations.conclude(c, proof, own, key2, keyRequest);
  };

  /**
   * The same verdict without waiting, when everything it needs is at hand (a credential seen before: its proof and
   * revocation answers are cached), else undefined. Only with the caller's digest, which keys the proof cache.
   */
  const verifyKnown = (credential: Credential, ctx: VerifyContext, digest: string | undefined): TrustVerdict | undefined => {
    if (digest === undefined) return undefined;
    const early = precheck(credential, ctx, digest);
    if (early !== undefined) return early;
    const proof = proofs.cached(digest);
    if (proof === undefined) return undefined;
    const failed = proofFailure(proof, ctx.now);
    if (failed !== undefined) return failed;
    const [ownRequest, keyRequest] = revocations.requests(credential, proof);
    const own = revocations.known(ownRequest);
    if (own === undefined) return undefined;
    const key = revocations.known(keyRequest);
    return key === undefined ? undefined : revocations.conclude(credential, proof, own, key, keyRequest);
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
        if (cold.has(key) || proofs.has(key)) continue;
        const size = measureCredential(credential, limits);
        if (size !== undefined) throw new CredentialTooLarge(i, size, limits, credential.id);
        cold.add(key);
      } catch (e) {
        if (e instanceof CredentialTooLarge) throw e;
        verdicts[i] = undecided('its verification failed unexpectedly');
      }
    }
    const reservation = cold.size > 0 ? proofs.reserve(ctx.tenant ?? '', cold.size) : undefined;
    try {
      await Promise.all(
        credentials.map(async (credential, i) => {
          if (verdicts[i] !== undefined) return;
          // Every credential without a verdict has its key from the loop above.
          const key = keys[i];
          verdicts[i] = key === undefined
            ? undecided('its verification failed unexpectedly')
            : await verifyOne(credential, ctx, key, reservation).catch(
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
    coldRefusal: proofs.atBudget,
    stats: proofs.stats,
    warm: proofs.warm,
    close: proofs.close,
  };
}
