/** The verifier's options and verdicts: types only, so that modules typing a verifier load nothing. */
import type { JsonLdLoader } from '../jsonld/documents.js';
import type { ProofReplayGuard } from './replay.js';
import type { PendingAuthorization } from './request.js';
import type { StateResolvers } from './state.js';

export interface ZkpVerifierOptions {
  stateResolvers: StateResolvers;
  documentLoader?: JsonLdLoader;
  /** Directory of <circuitId>/verification_key.json (default: the keys shipped in js-iden3-auth). */
  circuitsDir?: string;
  proofMaxAgeMs: number;
  clockSkewMs: number;
  stateTransitionDelayMs: number;
  /** Unsafe in production: nothing proves that the sender of a plain message controls its `from` identity. */
  allowPlainMessages?: boolean;
  /** Default: one InMemoryReplayGuard per verifier; null disables the check. */
  replayGuard?: ProofReplayGuard | null;
}

export type VerdictStatus = 'valid' | 'not-valid' | 'error';

export interface ZkpVerdict {
  objectId: string;
  requestId: number;
  circuitId: string;
  /** error: could not be decided, never a pass. */
  status: VerdictStatus;
  is_valid: boolean;
  /** Never quotes credential values. */
  reasons: string[];
  issuer?: string;
  proofTimestamp?: string;
  /** Personal: the caller keeps only its hash, per scenario. */
  nullifier?: string;
  /** Equal link ids: one credential. */
  linkId?: string;
  /** $sd: personal, never logged or stored. */
  disclosed?: { attribute: string; value: string | number | boolean };
}

export interface ZkpVerification {
  thid: string;
  /** Authenticated by the JWZ proof; claimed only, for a plain message. */
  userDid: string;
  envelope: 'jwz' | 'plain';
  verdicts: ZkpVerdict[];
  is_valid: boolean;
}

export interface VerifyCallOptions {
  now?: number;
  /**
   * The execute request's address: an identity made from an Ethereum address must be made from this one (422 before
   * any proof is checked); other identities (BabyJubJub keys) encode no address.
   */
  address?: string;
  /** Called after the cheap checks, before any proof is checked; what it throws refuses the answer. */
  beforeProof?: () => Promise<void>;
}

export interface ZkpVerifier {
  verify(token: string, pending: PendingAuthorization, options?: VerifyCallOptions): Promise<ZkpVerification>;
}
