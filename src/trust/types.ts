import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import type { FetchLike } from './http.js';
import type { IssuerList } from './issuers.js';
import type { StatusResolverFn } from './revocation.js';

export type { TrustVerdict };

export interface TrustOptions {
  /** `strict`: every check; `off`: every verdict ok (development only; the caller marks results `verification: "off"`). */
  mode: 'strict' | 'off';
  /** Trusted issuer DIDs, or `*` for any issuer. An empty list trusts nobody. */
  trustedIssuers: IssuerList;
  /**
   * DID resolver base URL, e.g. https://resolver.privado.id/1.0/identifiers (`{resolverUrl}/{did}?state={hex}`).
   * Needed only for issuer states that are not genesis states and for Iden3ReverseSparseMerkleTreeProof; without it
   * such credentials answer `error`.
   */
  resolverUrl?: string;
  /** Timeout of each outgoing request (status, DID resolver, remote JSON-LD document), ms. */
  timeoutMs: number;
  /** How long a "not revoked" answer is reused, ms (0: never). "Revoked" is remembered for good. */
  revocationCacheMs: number;
  /** How long a DID resolver's "published" answer is reused, ms (default 1 hour). */
  resolverCacheMs?: number;
  /** Entries of the verification cache (credential id + SHA-256 of its canonical JSON), default 10000. */
  cacheSize?: number;
  /** Refuse credentials whose credentialSubject.id encodes no address (default false: binding applies when it does). */
  requireHolderBinding?: boolean;
  /** More JSON-LD contexts / JSON schemas, URL -> document, served offline (they win over the bundled ones). */
  documents?: Readonly<Record<string, unknown>>;
  /** URL prefixes of JSON-LD documents that may be fetched once and kept in memory (default none: fully offline). */
  remoteDocumentPrefixes?: readonly string[];
  /** Largest answer accepted from any outgoing request, bytes (default 1 MiB). */
  maxResponseBytes?: number;
}

export interface TrustDeps {
  /** HTTP client (default: the global fetch). */
  fetch?: FetchLike;
  /** Clock of the caches, epoch ms (default Date.now). */
  clock?: () => number;
  /** Resolvers per credentialStatus type, added to (or replacing) the built-in ones, e.g. an on-chain one. */
  statusResolvers?: Readonly<Record<string, StatusResolverFn>>;
}

export interface VerifyContext {
  /** The request's address (the string form). */
  address: string;
  /** The scenario's own trusted issuers, if it has some: they narrow TrustOptions.trustedIssuers (intersection). */
  trustedIssuers?: IssuerList;
  /** Evaluation time, epoch ms (used for the expiration of the issuer's key). */
  now: number;
  /**
   * The credential types the rules read (e.g. the plan's `credentialSlots`). When given, a credential with none of
   * these types is not verified at all (no cost: wallets also send image credentials no rule reads) and gets a
   * not-valid verdict saying so, which no rule ever shows since no rule reads it.
   */
  relevantTypes?: { has(type: string): boolean };
  /** The credentials' content digests (contentHash), by position, when the caller has them already (the audit log does). */
  digests?: readonly string[];
}

export interface CredentialVerifier {
  readonly mode: 'strict' | 'off';
  /** One verdict per credential, same order. Never rejects. */
  verify(credentials: readonly Credential[], ctx: VerifyContext): Promise<TrustVerdict[]>;
}
