/**
 * Refusals of the execution strategies, made with @fastify/error: each carries its problem code and HTTP status,
 * which the problem+json handler answers as they are (OffChainZKP's callback: nothing changed on any of them).
 */
import createError from '@fastify/error';

/** No execution with this id (or none the caller may see). */
export const ExecutionNotFound = createError<[string]>('SCS_EXECUTION_NOT_FOUND', 'No execution with id %s', 404);

/** An answer to an execution that has its verdicts already, or failed. */
export const ExecutionNotPending = createError<[string]>('SCS_EXECUTION_NOT_PENDING', '%s', 409);

/** An answer after the execution's authorization request expired (the execution has failed meanwhile). */
export const RequestExpired = createError<[]>('SCS_REQUEST_EXPIRED', 'The authorization request expired; start a new execution', 410);

/** Too many answers wait for the one proof check of this process (MAX_WAITING_CHECKS). */
export class ProofChecksBusy extends createError<[]>(
  'SCS_OVERLOADED', 'Too many answers are waiting for their proof check; send it again shortly', 503,
) {
  readonly retryAfterSeconds = 1;
}

/** The execution's answer budget (ZKP_ANSWERS_PER_EXECUTION) is spent; Retry-After: until its request expires. */
export class TooManyAnswers extends createError<[number]>(
  'SCS_TOO_MANY_ANSWERS',
  'This execution has taken %d answers, the most it takes (ZKP_ANSWERS_PER_EXECUTION); start a new execution',
  429,
) {
  constructor(max: number, readonly retryAfterSeconds: number) {
    super(max);
  }
}
