import type { Address } from 'viem';
import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import type { FetchLike } from './http.js';
import type { IssuerList } from './issuers.js';
import type { StatusResolverFn } from './revocation.js';
import type { StatePublication } from './did-resolver.js';

export type { TrustVerdict };

/** The trust section of the configuration (src/trust/env.ts: every default is in that schema). */
export interface TrustOptions {
  /** `off`: every verdict ok (development only; the caller marks results `verification: "off"`). */
  mode: 'strict' | 'off';
  /** Trusted issuer DIDs, or `*` for any issuer. An empty list trusts nobody. */
  trustedIssuers: IssuerList;
  /** DID resolver base URL: without it, non-genesis issuer states and Iden3ReverseSparseMerkleTreeProof answer `error`. */
  resolverUrl?: string;
  /** Where issuer states' publication is checked; `chain`: the caller hands in state-contract.ts as TrustDeps.statePublication. */
  issuerStates: { source: 'resolver' | 'chain'; contracts: Readonly<Record<string, Address>> };
  timeoutMs: number;
  /** "Revoked" is remembered for good; "not revoked" this long. */
  revocationCacheMs: number;
  resolverCacheMs: number;
  cacheSize: number;
  requireHolderBinding: boolean;
  /** The operator's JSON-LD documents, URL -> document: they win over the bundled ones. */
  documents?: Readonly<Record<string, unknown>>;
  remoteDocumentPrefixes: readonly string[];
  /** 0 checks credentials on the calling thread. */
  threads: number;
  coldQueue: number;
  coldPerTenant: number;
  refusalCacheMs: number;
  maxCredentialBytes: number;
  maxCredentialLeaves: number;
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
