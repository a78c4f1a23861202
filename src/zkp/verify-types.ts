import type { JsonLdLoader } from '../jsonld/documents.js';
import type { ProofReplayGuard } from './replay.js';
import type { PendingAuthorization } from './request.js';
import type { StateResolvers } from './state.js';

export interface ZkpVerifierOptions {
  stateResolvers: StateResolvers;
  documentLoader?: JsonLdLoader;
  circuitsDir?: string;
  proofMaxAgeMs: number;
  clockSkewMs: number;
  stateTransitionDelayMs: number;
  /** Unsafe in production: a plain message's `from` is unproved. */
  allowPlainMessages?: boolean;
  replayGuard?: ProofReplayGuard | null;
}

export type VerdictStatus = 'valid' | 'not-valid' | 'error';

export interface ZkpVerdict {
  objectId: string;
  requestId: number;
  circuitId: string;
  status: VerdictStatus;
  is_valid: boolean;
  reasons: string[];
  issuer?: string;
  proofTimestamp?: string;
  /** Personal: only its hash is kept. */
  nullifier?: string;
  linkId?: string;
  /** Personal: never logged or stored. */
  disclosed?: { attribute: string; value: string | number | boolean };
}

export interface ZkpVerification {
  thid: string;
  /** Only claimed, for a plain message. */
  userDid: string;
  envelope: 'jwz' | 'plain';
  verdicts: ZkpVerdict[];
  is_valid: boolean;
}

export interface VerifyCallOptions {
  now?: number;
  address?: string;
  beforeProof?: () => Promise<void>;
}

export interface ZkpVerifier {
  verify(token: string, pending: PendingAuthorization, options?: VerifyCallOptions): Promise<ZkpVerification>;
}
