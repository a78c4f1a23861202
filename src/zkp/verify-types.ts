/** Types only, so that modules typing a verifier load nothing. */
import type { JsonLdLoader } from '../jsonld/documents.js';
import type { ProofReplayGuard } from './replay.js';
import type { PendingAuthorization } from './request.js';
import type { StateResolvers } from './state.js';

export interface ZkpVerifierOptions {
  stateResolvers: StateResolvers;
  documentLoader?: JsonLdLoader;
  /** <circuitId>/verification_key.json */
  circuitsDir?: string;
  proofMaxAgeMs: number;
  clockSkewMs: number;
  stateTransitionDelayMs: number;
  /** Unsafe in production: nothing proves that the sender of a plain message controls its `from` identity. */
  allowPlainMessages?: boolean;
  /** null disables the check. */
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
  /** An identity made from an Ethereum address must be made from this one. */
  address?: string;
  /** Before any proof is checked; what it throws refuses the answer. */
  beforeProof?: () => Promise<void>;
}

export interface ZkpVerifier {
  verify(token: string, pending: PendingAuthorization, options?: VerifyCallOptions): Promise<ZkpVerification>;
}
