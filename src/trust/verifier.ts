/**
 * The credential verifier: for each presented credential, in this order (the first failure is the verdict):
 * 1. structure (credentialStatus, credentialSchema, issuer, types, a BJJSignature2021 proof) — structure.ts;
 * 2. trusted issuer — issuers.ts;
 * 3. holder binding — holder.ts;
 * 4. the proof (core claim match, signature, issuer key and state) — proof.ts, cached per content;
 * 5. the issuer key's expiration (against the evaluation time);
 * 6. revocation of the credential and of the issuer's key, in parallel — revocation.ts, cached for a short time.
 * Cheap checks come first, so that untrusted or borrowed credentials cost no cryptography, and no URL named by a
 * credential is fetched before its issuer is trusted and its signature verified.
 */
import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import { contentHash } from './canonical.js';
import { createStateResolver } from './did-resolver.js';
import { createDocumentLoader } from './documents.js';
import { checkHolder } from './holder.js';
import { checkIssuer } from './issuers.js';
import { LruCache } from './lru.js';
import { verifyBjjProof, type VerifiedProof } from './proof.js';
import { createRevocationChecker, DEFAULT_STATUS_RESOLVERS, type RevocationOutcome } from './revocation.js';
import { checkStructure, notValid, OK, undecided, type Json } from './structure.js';
import type { CredentialVerifier, TrustDeps, TrustOptions, VerifyContext } from './types.js';

export const DEFAULTS = Object.freeze({
  timeoutMs: 3000,
  revocationCacheMs: 60_000,
  resolverCacheMs: 3_600_000,
  cacheSize: 10_000,
  maxResponseBytes: 1024 * 1024,
});

/**
 * `signed`: whether the status object is covered by the issuer's signature. When it is not (the issuer key's status in
 * the proof; a non-merklized credential's status), anyone holding a genuine credential could point it anywhere, so a
 * failure is reported without its network detail: the reason must not tell what answers at an arbitrary URL.
 */
function describeRevocation(o: RevocationOutcome, status: Json, what: 'credential' | 'key', signed: boolean): TrustVerdict {
  const type = String(status.type).slice(0, 100);
  const where = what === 'credential' ? 'credentialStatus' : "the issuer key's credentialStatus";
  switch (o.kind) {
    case 'active':
      return OK;
    case 'revoked':
      return what === 'credential'
        ? notValid(`revoked by its issuer (${type})`)
        : notValid('its issuer has revoked the key that signed it');
    case 'unsupported':
      return undecided(`${where} type ${JSON.stringify(type)} is not supported, so revocation cannot be checked`);
    default:
      return signed
        ? undecided(`${where} (${type} at ${String(status.id).slice(0, 300)}) cannot be resolved: ${o.why}`)
        : undecided(`${where} (${type}, not covered by the signature) cannot be resolved`);
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
    };
  }
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
  const proofs = new LruCache<string, VerifiedProof>(cacheSize, clock);
  const pendingProofs = new Map<string, Promise<VerifiedProof>>();

  const proofOf = (c: Json, digest: string | undefined): Promise<VerifiedProof> => {
    const key = `${String(c.id)}\u0000${digest ?? contentHash(c)}`;
    const hit = proofs.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let p = pendingProofs.get(key);
    if (p === undefined) {
      p = verifyBjjProof(c, { documentLoader, stateResolver })
        .catch((): VerifiedProof => ({ verdict: undecided('its proof could not be checked (unexpected failure)'), cacheable: false }))
        .then((r) => {
          if (r.cacheable && (r.verdict.ok || r.verdict.status === 'not-valid')) proofs.set(key, r);
          return r;
        })
        .finally(() => pendingProofs.delete(key));
      pendingProofs.set(key, p);
    }
    return p;
  };

  // Structure and holder binding depend only on the content and the request's address: remembered per (digest,
  // address) when the caller hands in digests, as the proof is per content.
  const shapes = new LruCache<string, Shape>(cacheSize, clock);
  const shapeOf = (credential: Credential, address: string): Shape => {
    const structure = checkStructure(credential);
    return structure.ok
      ? { structure, holder: checkHolder((credential as unknown as Json).credentialSubject as Json, address, requireHolderBinding) }
      : { structure, holder: structure };
  };

  const verifyOne = async (credential: Credential, ctx: VerifyContext, digest: string | undefined): Promise<TrustVerdict> => {
    if (ctx.relevantTypes !== undefined && !isRelevant(credential, ctx.relevantTypes)) return NOT_READ;
    let shape: Shape | undefined;
    if (digest === undefined) {
      shape = shapeOf(credential, ctx.address);
    } else {
      const key = `${digest}\u0000${ctx.address}`;
      shape = shapes.get(key);
      if (shape === undefined) shapes.set(key, (shape = shapeOf(credential, ctx.address)));
    }
    if (!shape.structure.ok) return shape.structure;
    const c = credential as unknown as Json;
    const issuer = checkIssuer(c.issuer as string, trusted, ctx.trustedIssuers);
    if (!issuer.ok) return issuer;
    if (!shape.holder.ok) return shape.holder;

    const proof = await proofOf(c, digest);
    if (!proof.verdict.ok) return proof.verdict;
    if (proof.keyExpiresAt !== undefined && !(proof.keyExpiresAt > ctx.now)) {
      return notValid('the issuer key that signed it has expired');
    }

    const status = c.credentialStatus as Json;
    const keyStatus = proof.keyStatus as Json;
    const issuerDid = c.issuer as string;
    const subjectId = (c.credentialSubject as Json).id;
    const holderDid = typeof subjectId === 'string' ? subjectId : issuerDid;
    const [own, key] = await Promise.all([
      revocation.check({ status, nonce: proof.nonce as bigint, issuerDid, holderDid }),
      revocation.check({ status: keyStatus, nonce: proof.keyNonce as bigint, issuerDid, holderDid: issuerDid }),
    ]);
    const ownVerdict = describeRevocation(own, status, 'credential', proof.statusSigned === true);
    const keyVerdict = describeRevocation(key, keyStatus, 'key', false);
    // A definite answer wins over an undecided one.
    if (!ownVerdict.ok && ownVerdict.status === 'not-valid') return ownVerdict;
    if (!keyVerdict.ok && keyVerdict.status === 'not-valid') return keyVerdict;
    if (!ownVerdict.ok) return ownVerdict;
    return keyVerdict;
  };

  return {
    mode,
    async verify(credentials, ctx) {
      if (!Array.isArray(credentials)) return [];
      return Promise.all(
        credentials.map((c, i) =>
          verifyOne(c, ctx, ctx.digests?.[i]).catch((): TrustVerdict => undecided('its verification failed unexpectedly')),
        ),
      );
    },
  };
}

