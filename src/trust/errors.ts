import createError from '@fastify/error';
import type { FieldError } from '../schemas/problem.js';
import type { CredentialLimits, CredentialSize } from './limits.js';

const ColdWorkError = createError<string, number, [string]>('SCS_VERIFICATION_BUDGET', '%s', 429);

/** One class for the tenant's budget (429) and the service's queue (503): told apart by `scope`. */
export class ColdWorkRefused extends ColdWorkError {
  override name = 'ColdWorkRefused';
  constructor(
    readonly scope: 'tenant' | 'service',
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
    if (scope === 'service') {
      this.code = 'SCS_VERIFICATION_QUEUE_FULL';
      this.statusCode = 503;
    }
  }
}

const TooLargeError = createError<[string]>('SCS_VALIDATION', '%s', 400);

export class CredentialTooLarge extends TooLargeError {
  override name = 'CredentialTooLarge';
  readonly detail: string;
  readonly errors: FieldError[];

  constructor(
    readonly index: number,
    readonly size: CredentialSize,
    readonly limits: CredentialLimits,
    id: string,
  ) {
    super(
      size.over === 'bytes'
        ? `must be at most ${limits.bytes} bytes of JSON to be verified (MAX_CREDENTIAL_BYTES)`
        : `must hold at most ${limits.leaves} values outside its proof to be verified (MAX_CREDENTIAL_LEAVES)`,
    );
    this.detail = `Credential ${index} (${JSON.stringify(id.slice(0, 200))}) is too large to be verified`;
    this.errors = [{ field: `body.credentials[${index}]`, pointer: `/credentials/${index}`, message: this.message }];
  }

  /** By prototype, not by code: http's ValidationFailed shares the code SCS_VALIDATION. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }
}
