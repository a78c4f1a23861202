import type { Address } from 'viem';
import type { TrustVerdict } from '../engine/types.js';
import type { Credential } from '../schemas/credential.js';
import type { FetchLike } from './http.js';
import type { IssuerList } from './issuers.js';
import type { StatusResolverFn } from './revocation.js';
import type { SharedAnswers, StatePublication } from './did-resolver.js';

export type { TrustVerdict };

export interface TrustOptions {
  /** `off`: development only. */
  mode: 'strict' | 'off';
  /** An empty list trusts nobody. */
  trustedIssuers: IssuerList;
  /** Without it, non-genesis issuer states answer `error`. */
  resolverUrl?: string;
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
  statusResolvers?: Readonly<Record<string, StatusResolverFn>>;
  statePublication?: (resolver: StatePublication) => StatePublication;
  coldBudget?: SharedColdBudget;
  sharedStates?: SharedAnswers;
  sharedRevocations?: SharedAnswers;
}

/** undefined: Redis did not answer. */
export interface SharedColdBudget {
  reserve(tenant: string, n: number, max: number): Promise<{ admitted: true; release(): void } | { admitted: false; held: number } | undefined>;
}

export interface VerifyContext {
  address: string;
  trustedIssuers?: IssuerList;
  now: number;
  /** Wallets also send credentials no rule reads. */
  relevantTypes?: { has(type: string): boolean };
  digests?: readonly string[];
  tenant?: string;
  /**
   * No cold work and no budget: a credential whose verification is not already known (proof and revocation answers
   * cached) is undecided. For work nobody asked to pay for (a shadow run).
   */
  warmOnly?: boolean;
}

export interface CredentialVerifier {
  readonly mode: 'strict' | 'off';
  /** A rejection has checked nothing. */
  verify(credentials: readonly Credential[], ctx: VerifyContext): Promise<TrustVerdict[]>;
  coldRefusal(tenant: string): Error | undefined;
  stats(): VerifierStats;
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
