/**
 * The credential verifier. Checks run in this order, the first failure being the verdict: structure, trusted issuer,
 * holder binding, proof (cold pool, cached per content), issuer key expiry, revocation. Cheap checks come first, so
 * untrusted, borrowed or oversized credentials cost no cryptography, and no URL a credential names is fetched before
 * its issuer is trusted and its signing key shown to be that issuer's.
 */
import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import { contentDigest } from '../domain/canonical-json.js';
import { createStateResolver } from './did-resolver.js';
import { createDocumentLoader } from '../jsonld/documents.js';
import { checkHolder } from './holder.js';
import { checkIssuer } from './issuers.js';
import { keep, lruCache } from '../domain/cache.js';
import { ColdWorkRefused, CredentialTooLarge } from './errors.js';
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
import type { TrustCheck } from '../schemas/trace.js';

const MAX_RESPONSE_BYTES = 1024 * 1024;

interface Shape {
  structure: TrustVerdict;
  holder: TrustVerdict;
}

/** `verdict`, naming the check that failed (a dry run's trace shows it); allocates only on failure. */
function failedAt(verdict: TrustVerdict, check: TrustCheck): TrustVerdict {
  return verdict.ok || verdict.check === check ? verdict : { ...verdict, check };
}

const NOT_KNOWN = Object.freeze(undecided('not verified yet, and this evaluation does no first verification'));
const NOT_READ = notValid('not verified: no rule of this scenario reads its type');
const KEY_EXPIRED = Object.freeze(failedAt(notValid('the issuer key that signed it has expired'), 'issuerKey'));

function isRelevant(c: unknown, types: { has(type: string): boolean }): boolean {
  const t = isRecord(c) ? c.type : undefined;
  return Array.isArray(t) && t.some((x) => typeof x === 'string' && types.has(x));
}

/** As the pool's own refusal (ColdPool.reserve), the count being every instance's. */
function sharedColdRefusal(held: number, n: number, max: number): ColdWorkRefused {
  return new ColdWorkRefused('tenant', 1,
    `This token has ${held} credential(s) waiting for their first verification across the service's instances and may have at most ${max} ` +
      `at once; this request would add ${n}`);
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
  // Revocation answers (Merkle proofs) are checked on this thread.
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
    shared: deps.sharedStates,
  });
  const revocations = createRevocationVerdicts(createRevocationChecker({
    io: { fetch: fetchImpl, timeoutMs, maxBytes: MAX_RESPONSE_BYTES, stateResolver },
    resolvers: { ...DEFAULT_STATUS_RESOLVERS, ...(deps.statusResolvers ?? {}) },
    revocationCacheMs,
    cacheSize,
    clock,
    shared: deps.sharedRevocations,
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

  // Structure and holder binding depend only on content and address: kept per digest with the last address (a
  // credential comes back with its holder's).
  const shapes = lruCache<string, { address: string; shape: Shape }>(cacheSize, clock);
  const shapeOf = (credential: Credential, address: string): Shape => {
    const structure = failedAt(checkStructure(credential, checkProofStructure), 'structure');
    return structure.ok
      ? { structure, holder: failedAt(checkHolder(credential.credentialSubject, address, requireHolderBinding), 'holder') }
      : { structure, holder: structure };
  };

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
    if (!issuer.ok) return failedAt(issuer, 'issuer');
    if (!shape.holder.ok) return shape.holder;
    return undefined;
  };

  const proofFailure = (proof: VerifiedProof, now: number): TrustVerdict | undefined => {
    if (!proof.verdict.ok) return failedAt(proof.verdict, 'proof');
    if (proof.keyExpiresAt !== undefined && !(proof.keyExpiresAt > now)) return KEY_EXPIRED;
    return undefined;
  };

  const verifyOne = async (c: Credential, ctx: VerifyContext, key: string, reservation: Reservation | undefined): Promise<TrustVerdict> => {
    const proof = await proofs.get(c, key, reservation);
    const failed = proofFailure(proof, ctx.now);
    if (failed !== undefined) return failed;
    const [ownRequest, keyRequest] = revocations.requests(c, proof);
    const [own, key2] = await Promise.all([revocations.check(ownRequest), revocations.check(keyRequest)]);
    return failedAt(revocations.conclude(c, proof, own, key2, keyRequest), 'revocation');
  };

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
    return key === undefined ? undefined : failedAt(revocations.conclude(credential, proof, own, key, keyRequest), 'revocation');
  };

  /** Every limit and reservation comes before any cold check, so a refusal leaves nothing started. */
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
        const key = ctx.digests?.[i] ?? contentDigest(credential);
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
    const tenant = ctx.tenant ?? '';
    const shared = cold.size > 0 ? await deps.coldBudget?.reserve(tenant, cold.size, options.coldPerTenant) : undefined;
    if (shared?.admitted === false) throw sharedColdRefusal(shared.held, cold.size, options.coldPerTenant);
    let reservation: Reservation | undefined;
    try {
      reservation = cold.size > 0 ? proofs.reserve(tenant, cold.size) : undefined;
      await Promise.all(
        credentials.map(async (credential, i) => {
          if (verdicts[i] !== undefined) return;
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
      if (shared?.admitted) shared.release();
    }
    return verdicts;
  };

  return {
    mode,
    async verify(credentials, ctx) {
      if (!Array.isArray(credentials)) return [];
      if (ctx.warmOnly) {
        return credentials.map((c, i) => {
          try {
            return verifyKnown(c, ctx, ctx.digests?.[i] ?? contentDigest(c)) ?? NOT_KNOWN;
          } catch {
            return undecided('its verification failed unexpectedly');
          }
        });
      }
      // Known credentials are decided without a promise each; the first that needs I/O sends all the slow way.
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
