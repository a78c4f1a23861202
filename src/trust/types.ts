import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import type { FetchLike } from './http.js';
import type { IssuerList } from './issuers.js';
import type { StatusResolverFn } from './revocation.js';
import type { StatePublication } from './did-resolver.js';

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
  /**
   * Where issuer states' publication is checked: the DID resolver (default), or the State contracts read through the
   * service's chains (`chain`: the caller builds it, state-contract.ts, and hands it in as TrustDeps.statePublication),
   * with State contract addresses per chain (`eip155:<id>`) over iden3's defaults.
   */
  issuerStates?: { source: 'resolver' | 'chain'; contracts: Readonly<Record<string, string>> };
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
  /**
   * Worker threads that check credentials seen for the first time (signature, issuer key, merklization); 0 (the
   * default here; the service's VERIFY_THREADS defaults to one per CPU) checks them on the calling thread.
   */
  threads?: number;
  /** Credentials waiting for or in their first check at once: in all (default 256), and per tenant (default 100). */
  coldQueue?: number;
  coldPerTenant?: number;
  /** How long a refusal that hangs on a changeable fact (an issuer state the resolver cannot answer for) is kept, ms. */
  refusalCacheMs?: number;
  /** Largest credential verified: bytes of its JSON (default 64 KiB), scalar values outside its proof (default 256). */
  maxCredentialBytes?: number;
  maxCredentialLeaves?: number;
}

export interface TrustDeps {
  /** HTTP client (default: the global fetch). */
  fetch?: FetchLike;
  /** Clock of the caches, epoch ms (default Date.now). */
  clock?: () => number;
  /** Resolvers per credentialStatus type, added to (or replacing) the built-in ones, e.g. an on-chain one. */
  statusResolvers?: Readonly<Record<string, StatusResolverFn>>;
  /**
   * Where to ask whether an issuer state was published (BJJ proofs at a non-genesis state, Iden3SparseMerkleTreeProof),
   * given the DID resolver of `resolverUrl`: by default that resolver; e.g. the State contracts (state-contract.ts), or
   * the demo issuer's own states before the resolver (demoStatePublication).
   */
  statePublication?: (resolver: StatePublication) => StatePublication;
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
  /** Who asks (a token fingerprint or JWT subject): cold checks are budgeted and shared fairly per tenant. */
  tenant?: string;
}

export interface CredentialVerifier {
  readonly mode: 'strict' | 'off';
  /**
   * One verdict per credential, same order. Rejects only with CredentialTooLarge (a credential to be checked is over a
   * size limit) or ColdWorkRefused (no room in the cold verification pool for this tenant or at all): nothing was
   * checked then. Every other failure is a verdict.
   */
  verify(credentials: readonly Credential[], ctx: VerifyContext): Promise<TrustVerdict[]>;
  /**
   * Whether `tenant` is at its budget of first checks, known before its request is read: the refusal (429 with
   * Retry-After) its execute then meets at once, or undefined.
   */
  coldRefusal(tenant: string): Error | undefined;
  /** Counters for metrics and tests: cold checks started, the pool's load, and the two proof caches' sizes. */
  stats(): VerifierStats;
  /** Starts the cold verification threads now instead of at the first credential (a server calls it at start). */
  warm(): void;
  /** Stops the cold verification threads. */
  close(): Promise<void>;
}

export interface VerifierStats {
  /** Cold checks started (one per credential content whose proof was neither cached nor being checked). */
  coldChecks: number;
  /** Credentials admitted to the cold pool and not finished, and how many the pool takes at most. */
  coldReserved: number;
  coldCapacity: number;
  /** Entries of the verified-proof cache and of the refusal cache. */
  verified: number;
  refused: number;
}
