/** Each code and status is answered as it is; a refusal has changed nothing. */
import createError from '@fastify/error';

/** Also for one the caller may not see. */
export const ExecutionNotFound = createError<[string]>('SCS_EXECUTION_NOT_FOUND', 'No execution with id %s', 404);

export const ExecutionNotPending = createError<[string]>('SCS_EXECUTION_NOT_PENDING', '%s', 409);

/** The execution has failed meanwhile. */
export const RequestExpired = createError<[]>('SCS_REQUEST_EXPIRED', 'The authorization request expired; start a new execution', 410);

/** MAX_WAITING_CHECKS answers wait for this process's one proof check. */
export class ProofChecksBusy extends createError<[]>(
  'SCS_OVERLOADED', 'Too many answers are waiting for their proof check; send it again shortly', 503,
) {
  readonly retryAfterSeconds = 1;
}

/** Retry-After: until its request expires. */
export class TooManyAnswers extends createError<[number]>(
  'SCS_TOO_MANY_ANSWERS',
  'This execution has taken %d answers, the most it takes (ZKP_ANSWERS_PER_EXECUTION); start a new execution',
  429,
) {
  constructor(max: number, readonly retryAfterSeconds: number) {
    super(max);
  }
}
