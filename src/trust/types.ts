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
  /** An empty list trusts nobody. */
  trustedIssuers: IssuerList;
  /** Without it, non-genesis issuer states and Iden3ReverseSparseMerkleTreeProof answer `error`. */
  resolverUrl?: string;
  /** `chain`: the caller hands in state-contract.ts as TrustDeps.statePublication. */
  issuerStates: { source: 'resolver' | 'chain'; contracts: Readonly<Record<string, Address>> };
  timeoutMs: number;
  /** "Revoked" is remembered for good; "not revoked" this long. */
  revocationCacheMs: number;
  resolverCacheMs: number;
  cacheSize: number;
  requireHolderBinding: boolean;
  documents?: Readonly<Record<string, unknown>>;
  remoteDocumentPrefixes: readonly string[];
  threads: number;
  coldQueue: number;
  coldPerTenant: number;
  refusalCacheMs: number;
  maxCredentialBytes: number;
  maxCredentialLeaves: number;
}

export interface TrustDeps {
  fetch?: FetchLike;
  clock?: () => number;
  /** Added to (or replacing) the built-in resolvers, by credentialStatus type. */
  statusResolvers?: Readonly<Record<string, StatusResolverFn>>;
  /** Wraps the DID resolver's answer to "was this issuer state published": the State contracts, the demo issuer's. */
  statePublication?: (resolver: StatePublication) => StatePublication;
}

export interface VerifyContext {
  address: string;
  /** The scenario's own list: it narrows TrustOptions.trustedIssuers. */
  trustedIssuers?: IssuerList;
  now: number;
  /** The types the rules read: a credential with none of them is not verified (wallets also send ones no rule reads). */
  relevantTypes?: { has(type: string): boolean };
  /** contentHash of each credential, when the caller has them. */
  digests?: readonly string[];
  /** Cold checks are budgeted and shared fairly per tenant (token fingerprint or JWT subject). */
  tenant?: string;
}

export interface CredentialVerifier {
  readonly mode: 'strict' | 'off';
  /** One verdict per credential; rejects only with CredentialTooLarge or ColdWorkRefused, having checked nothing. */
  verify(credentials: readonly Credential[], ctx: VerifyContext): Promise<TrustVerdict[]>;
  /** The refusal a tenant at its budget of first checks meets before its request is read, or undefined. */
  coldRefusal(tenant: string): Error | undefined;
  stats(): VerifierStats;
  /** Starts the cold verification threads now instead of at the first credential. */
  warm(): void;
  close(): Promise<void>;
}

export interface VerifierStats {
  coldChecks: number;
  coldReserved: number;
  coldCapacity: number;
  verified: number;
  refused: number;
}
