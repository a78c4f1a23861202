/**
 * What the verifier (verify.ts) takes and answers: its options, and the verdicts of an answer. Types and defaults
 * only, so that modules typing a verifier load nothing.
 */
import type { JsonLdLoader } from '../jsonld/documents.js';
import type { ProofReplayGuard } from './replay.js';
import type { PendingAuthorization } from './request.js';
import type { StateResolvers } from './state.js';

export const DEFAULT_PROOF_MAX_AGE_MS = 60 * 60_000;
export const DEFAULT_CLOCK_SKEW_MS = 5 * 60_000;
export const DEFAULT_STATE_TRANSITION_DELAY_MS = 60 * 60_000;

export interface ZkpVerifierOptions {
  /** Chain key ("polygon:amoy") -> state resolver (createRpcStateResolvers; alwaysLatestStateResolvers in tests). */
  stateResolvers: StateResolvers;
  /** Offline JSON-LD loader (default: the bundled documents only). */
  documentLoader?: JsonLdLoader;
  /** Directory of <circuitId>/verification_key.json (env ZKP_CIRCUITS_DIR; default: the keys shipped in js-iden3-auth). */
  circuitsDir?: string;
  /** Oldest accepted proof, ms between its timestamp signal and verification (env ZKP_PROOF_MAX_AGE_SECONDS, default 3600 s). */
  proofMaxAgeMs?: number;
  /** How far in the future a proof timestamp may be, ms (env ZKP_CLOCK_SKEW_SECONDS, default 300 s). */
  clockSkewMs?: number;
  /**
   * How long after an issuer replaced its non-revocation state a proof against the old one is accepted, ms
   * (env ZKP_STATE_TRANSITION_DELAY_SECONDS, default 3600 s).
   */
  stateTransitionDelayMs?: number;
  /**
   * Accept unsigned plain iden3comm messages (JSON text) besides JWZ tokens (env ZKP_ALLOW_PLAIN_RESPONSES, default
   * false). Unsafe in production: nothing proves that the sender controls the `from` identity.
   */
  allowPlainMessages?: boolean;
  /** Replay guard (default: one InMemoryReplayGuard per verifier); null disables the check. */
  replayGuard?: ProofReplayGuard | null;
}

export type VerdictStatus = 'valid' | 'not-valid' | 'error';

/** The verdict for one rule (query configuration). */
export interface ZkpVerdict {
  objectId: string;
  requestId: number;
  circuitId: string;
  /** valid; not-valid (the proof does not show the rule holds); error (could not be decided: never a pass). */
  status: VerdictStatus;
  is_valid: boolean;
  /** Empty when valid. Never quotes credential values (a ZK proof reveals none). */
  reasons: string[];
  /** DID of the credential's issuer, from the proof's public signals. */
  issuer?: string;
  /** When the wallet made the proof (its timestamp signal), ISO 8601. */
  proofTimestamp?: string;
  /**
   * V3, where the rule asks one (params.nullifierSessionId): the proof's nullifier, decimal. Personal: the caller
   * (offchain-zkp.ts) keeps only its hash, per scenario.
   */
  nullifier?: string;
  /** V3 and linkedMultiQuery in a group: the proof's link id (equal link ids: one credential). */
  linkId?: string;
  /** $sd, when valid: the value the holder disclosed (checked against the proof). Personal: never logged or stored. */
  disclosed?: { attribute: string; value: string | number | boolean };
}

export interface ZkpVerification {
  thid: string;
  /** The holder's DID (`from`): authenticated by the JWZ proof; claimed only, for a plain message. */
  userDid: string;
  envelope: 'jwz' | 'plain';
  /** One per rule of the pending authorization, in its order. */
  verdicts: ZkpVerdict[];
  /** Every verdict valid. */
  is_valid: boolean;
}

export interface VerifyCallOptions {
  /** Epoch ms (default Date.now()): request expiry and proof age are judged at this instant. */
  now?: number;
  /**
   * The execute request's address. Where the proving identity (`from`) is made from an Ethereum address (an
   * Ethereum-controlled iden3 identity), it must be this address: the answer is refused (422) otherwise, before any
   * proof is checked. Other identities (BabyJubJub keys) encode no address: nothing in the answer binds them to it.
   */
  address?: string;
  /**
   * Called once the answer decoded and passed the cheap checks (thread id, recipient, message, request ids, identity
   * and address), before any proof is checked; what it throws refuses the answer (the caller's answer budget).
   */
  beforeProof?: () => Promise<void>;
}

/** A loaded verifier: create once per process with createZkpVerifier, then call verify for each answer. */
export interface ZkpVerifier {
  verify(token: string, pending: PendingAuthorization, options?: VerifyCallOptions): Promise<ZkpVerification>;
}
