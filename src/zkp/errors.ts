/**
 * Typed errors of the ZKP module. Each one means "this input cannot be acted on" and carries a stable `code` and
 * the HTTP status a route should answer with; the execution it was aimed at must stay unchanged.
 * (Verdicts about proofs are not errors: see ZkpVerification.verdicts.)
 * Messages never quote credential values or whole tokens.
 */
import type { FieldProblem } from '../engine/validate.js';

export type ZkpErrorCode =
  | 'ZKP_INVALID_QUERIES'
  | 'ZKP_INVALID_OPTIONS'
  | 'ZKP_MALFORMED_RESPONSE'
  | 'ZKP_UNSUPPORTED_RESPONSE'
  | 'ZKP_INVALID_TOKEN'
  | 'ZKP_RESPONSE_MISMATCH'
  | 'ZKP_THREAD_MISMATCH'
  | 'ZKP_REQUEST_EXPIRED'
  | 'ZKP_PROOF_REPLAYED'
  | 'ZKP_VERIFIER_UNAVAILABLE';

export class ZkpError extends Error {
  readonly code: ZkpErrorCode;
  /** The HTTP status a route should answer with (problem+json). */
  readonly statusCode: number;

  constructor(code: ZkpErrorCode, statusCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.statusCode = statusCode;
  }
}

/** The query configurations cannot be turned into an authorization request (400, with one problem per field). */
export class ZkpQueryError extends ZkpError {
  readonly problems: FieldProblem[];
  constructor(problems: FieldProblem[]) {
    super('ZKP_INVALID_QUERIES', 400,
      `the query configurations cannot be proved with zero-knowledge proofs: ${problems.map((p) => `${p.pointer}: ${p.message}`).join('; ')}`);
    this.problems = problems;
  }
}

/** A programming/configuration error in the options handed to the module (a 500 if it ever reaches a route). */
export class ZkpOptionsError extends ZkpError {
  constructor(message: string) {
    super('ZKP_INVALID_OPTIONS', 500, message);
  }
}

/** The posted body is not a JWZ token (or, when allowed, a plain iden3comm message) of an authorization response. */
export class MalformedResponseError extends ZkpError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ZKP_MALFORMED_RESPONSE', 400, message, options);
  }
}

/** A well-formed message the verifier does not accept: JWS tokens, unsigned plain messages when not allowed. */
export class UnsupportedResponseError extends ZkpError {
  constructor(message: string) {
    super('ZKP_UNSUPPORTED_RESPONSE', 400, message);
  }
}

/**
 * The JWZ envelope does not verify: its authV2/authV3 proof is invalid, the user's state or GIST root is unknown,
 * or the proof was not made for this message by its `from` identity. Nothing in it can be trusted.
 */
export class InvalidTokenError extends ZkpError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ZKP_INVALID_TOKEN', 422, message, options);
  }
}

/** The response is addressed to another verifier, signs another message, or answers request ids not asked. */
export class ResponseMismatchError extends ZkpError {
  constructor(message: string) {
    super('ZKP_RESPONSE_MISMATCH', 422, message);
  }
}

/** The response answers another authorization request (its thread id differs): e.g. replayed into another execution. */
export class ThreadMismatchError extends ZkpError {
  constructor(message: string) {
    super('ZKP_THREAD_MISMATCH', 409, message);
  }
}

/** The authorization request expired before the response arrived. */
export class RequestExpiredError extends ZkpError {
  readonly expiredAt: Date;
  constructor(expiredAt: Date) {
    super('ZKP_REQUEST_EXPIRED', 410, `the authorization request expired at ${expiredAt.toISOString()}; start a new execution`);
    this.expiredAt = expiredAt;
  }
}

/** A proof already accepted for another authorization request was presented again. */
export class ProofReplayedError extends ZkpError {
  readonly requestId: number;
  constructor(requestId: number) {
    super('ZKP_PROOF_REPLAYED', 409,
      `the proof for request id ${requestId} was already used to answer another authorization request`);
    this.requestId = requestId;
  }
}

/**
 * The answer could not be checked because something the verifier depends on failed (a state resolver's RPC):
 * nothing was decided, the wallet may send the same answer again later (503).
 */
export class VerifierUnavailableError extends ZkpError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ZKP_VERIFIER_UNAVAILABLE', 503, message, options);
  }
}

export const isZkpError = (e: unknown): e is ZkpError => e instanceof ZkpError;
