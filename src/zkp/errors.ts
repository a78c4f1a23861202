/** Verdicts about proofs are not errors. Messages never quote credential values or whole tokens. */
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

const zkpError = <Arg extends unknown[]>(code: ZkpErrorCode, statusCode: number) => createError<ZkpErrorCode, number, Arg>(code, '%s', statusCode);

/** `instanceof` by code: @fastify/error's classes share no prototype but Error's. */
export abstract class ZkpError extends Error {
  abstract readonly code: ZkpErrorCode;
  abstract readonly statusCode: number;
  static override [Symbol.hasInstance](value: unknown): value is ZkpError {
    return value instanceof Error && 'code' in value && typeof value.code === 'string' && ZKP_CODES.has(value.code);
  }
}

export class ZkpQueryError extends zkpError<[string]>('ZKP_INVALID_QUERIES', 400) {
  override name = 'ZkpQueryError';
  constructor(readonly problems: FieldProblem[]) {
    super(`the query configurations cannot be proved with zero-knowledge proofs: ${problems.map((p) => `${p.pointer}: ${p.message}`).join('; ')}`);
  }
}

export class ZkpOptionsError extends zkpError<[string]>('ZKP_INVALID_OPTIONS', 500) {
  override name = 'ZkpOptionsError';
}

export class MalformedResponseError extends zkpError<[string, { cause?: unknown }?]>('ZKP_MALFORMED_RESPONSE', 400) {
  override name = 'MalformedResponseError';
}

export class UnsupportedResponseError extends zkpError<[string]>('ZKP_UNSUPPORTED_RESPONSE', 400) {
  override name = 'UnsupportedResponseError';
}

export class InvalidTokenError extends zkpError<[string, { cause?: unknown }?]>('ZKP_INVALID_TOKEN', 422) {
  override name = 'InvalidTokenError';
}

export class ResponseMismatchError extends zkpError<[string]>('ZKP_RESPONSE_MISMATCH', 422) {
  override name = 'ResponseMismatchError';
}

export class ThreadMismatchError extends zkpError<[string]>('ZKP_THREAD_MISMATCH', 409) {
  override name = 'ThreadMismatchError';
}

export class RequestExpiredError extends zkpError<[string]>('ZKP_REQUEST_EXPIRED', 410) {
  override name = 'RequestExpiredError';
  constructor(readonly expiredAt: Date) {
    super(`the authorization request expired at ${expiredAt.toISOString()}; start a new execution`);
  }
}

export class ProofReplayedError extends zkpError<[string]>('ZKP_PROOF_REPLAYED', 409) {
  override name = 'ProofReplayedError';
  constructor(readonly requestId: number) {
    super(`the proof for request id ${requestId} was already used to answer another authorization request`);
  }
}

/** Nothing was decided: the wallet may send again. */
export class VerifierUnavailableError extends zkpError<[string, { cause?: unknown }?]>('ZKP_VERIFIER_UNAVAILABLE', 503) {
  override name = 'VerifierUnavailableError';
  readonly retryAfterSeconds = 5;
}

export const isZkpError = (e: unknown): e is ZkpError => e instanceof ZkpError;
