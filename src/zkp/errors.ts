/**
 * Typed errors of the ZKP module, made with @fastify/error. Each one means "this input cannot be acted on" and carries
 * a stable `code` and the HTTP status a route answers with (the problem handler answers ZKP_X as SCS_ZKP_X); the
 * execution it was aimed at must stay unchanged. (Verdicts about proofs are not errors: see ZkpVerification.verdicts.)
 * Messages never quote credential values or whole tokens.
 */
import createError from '@fastify/error';
import type { FieldProblem } from '../engine/validate.js';

const CODES = [
  'ZKP_INVALID_QUERIES',
  'ZKP_INVALID_OPTIONS',
  'ZKP_MALFORMED_RESPONSE',
  'ZKP_UNSUPPORTED_RESPONSE',
  'ZKP_INVALID_TOKEN',
  'ZKP_RESPONSE_MISMATCH',
  'ZKP_THREAD_MISMATCH',
  'ZKP_REQUEST_EXPIRED',
  'ZKP_PROOF_REPLAYED',
  'ZKP_VERIFIER_UNAVAILABLE',
] as const;
export type ZkpErrorCode = (typeof CODES)[number];
const ZKP_CODES: ReadonlySet<string> = new Set(CODES);

/** One of the module's error classes: its messages are whole, formatted by the caller. */
const zkpError = <Arg extends unknown[]>(code: ZkpErrorCode, statusCode: number) => createError<ZkpErrorCode, number, Arg>(code, '%s', statusCode);

/**
 * Any error below: `e instanceof ZkpError` holds for each (by its code: @fastify/error's classes share no prototype
 * but Error's), and narrows `e` to its code and status.
 */
export abstract class ZkpError extends Error {
  abstract readonly code: ZkpErrorCode;
  /** The HTTP status a route answers with (problem+json). */
  abstract readonly statusCode: number;
  static override [Symbol.hasInstance](value: unknown): value is ZkpError {
    return value instanceof Error && 'code' in value && typeof value.code === 'string' && ZKP_CODES.has(value.code);
  }
}

/** The query configurations cannot be turned into an authorization request (400, with one problem per field). */
export class ZkpQueryError extends zkpError<[string]>('ZKP_INVALID_QUERIES', 400) {
  override name = 'ZkpQueryError';
  constructor(readonly problems: FieldProblem[]) {
    super(`the query configurations cannot be proved with zero-knowledge proofs: ${problems.map((p) => `${p.pointer}: ${p.message}`).join('; ')}`);
  }
}

/** A programming/configuration error in the options handed to the module (a 500 if it ever reaches a route). */
export class ZkpOptionsError extends zkpError<[string]>('ZKP_INVALID_OPTIONS', 500) {
  override name = 'ZkpOptionsError';
}

/** The posted body is not a JWZ token (or, when allowed, a plain iden3comm message) of an authorization response. */
export class MalformedResponseError extends zkpError<[string, { cause?: unknown }?]>('ZKP_MALFORMED_RESPONSE', 400) {
  override name = 'MalformedResponseError';
}

/** A well-formed message the verifier does not accept: JWS tokens, unsigned plain messages when not allowed. */
export class UnsupportedResponseError extends zkpError<[string]>('ZKP_UNSUPPORTED_RESPONSE', 400) {
  override name = 'UnsupportedResponseError';
}

/**
 * The JWZ envelope does not verify: its authV2/authV3 proof is invalid, the user's state or GIST root is unknown,
 * or the proof was not made for this message by its `from` identity. Nothing in it can be trusted.
 */
export class InvalidTokenError extends zkpError<[string, { cause?: unknown }?]>('ZKP_INVALID_TOKEN', 422) {
  override name = 'InvalidTokenError';
}

/** The response is addressed to another verifier, signs another message, or answers request ids not asked. */
export class ResponseMismatchError extends zkpError<[string]>('ZKP_RESPONSE_MISMATCH', 422) {
  override name = 'ResponseMismatchError';
}

/** The response answers another authorization request (its thread id differs): e.g. replayed into another execution. */
export class ThreadMismatchError extends zkpError<[string]>('ZKP_THREAD_MISMATCH', 409) {
  override name = 'ThreadMismatchError';
}

/** The authorization request expired before the response arrived. */
export class RequestExpiredError extends zkpError<[string]>('ZKP_REQUEST_EXPIRED', 410) {
  override name = 'RequestExpiredError';
  constructor(readonly expiredAt: Date) {
    super(`the authorization request expired at ${expiredAt.toISOString()}; start a new execution`);
  }
}

/** A proof already accepted for another authorization request was presented again. */
export class ProofReplayedError extends zkpError<[string]>('ZKP_PROOF_REPLAYED', 409) {
  override name = 'ProofReplayedError';
  constructor(readonly requestId: number) {
    super(`the proof for request id ${requestId} was already used to answer another authorization request`);
  }
}

/**
 * The answer could not be checked because something the verifier depends on failed (a state resolver's RPC):
 * nothing was decided, the wallet may send the same answer again later (503, Retry-After: 5).
 */
export class VerifierUnavailableError extends zkpError<[string, { cause?: unknown }?]>('ZKP_VERIFIER_UNAVAILABLE', 503) {
  override name = 'VerifierUnavailableError';
  readonly retryAfterSeconds = 5;
}

export const isZkpError = (e: unknown): e is ZkpError => e instanceof ZkpError;
