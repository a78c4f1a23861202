/** src/http/type-routes.ts registers it. */
import { Type } from '@sinclair/typebox';
import { refOf } from '../../schemas/common.js';
import { Execution } from '../../schemas/execution.js';
import { ExecutionNotFound } from '../errors.js';
import type { ScenarioRoute, ScenarioStrategy } from '../types.js';

/** OffChainZkp, named here, not imported, since the strategy imports this file. */
interface Answers extends ScenarioStrategy {
  readonly responsesPerMinute: number;
  answer(executionId: string, token: string): Promise<{ execution: unknown } | undefined>;
}

/** Answers waiting for the proof check running in this process before more get 503. */
export const MAX_WAITING_CHECKS = 16;

/** Where the wallet POSTs its answer. */
export const callbackPath = (executionId: string) => `/compliance/executions/${executionId}/zkp-response`;

/**
 * Open: the wallet has no token; the proof and the thread id bind the answer. Anyone may answer, and an answer whose
 * cheap checks pass costs a proof check: a limit per client address (instead of the service-wide one), a budget per
 * execution and one check at a time bound that cost.
 */
export const callbackRoute: ScenarioRoute<Answers> = {
  method: 'POST',
  path: callbackPath(':executionId'),
  operationId: 'answerZkpRequest',
  summary: 'The wallet\'s answer to an OffChainZKP authorization request',
  description:
    'iden3comm callback, no bearer token: the body is the JWZ token (text/plain), or a plain iden3comm message where ' +
    'ZKP_ALLOW_PLAIN_RESPONSES is on. The proofs are verified (Groth16 against the circuit keys, query match, issuer ' +
    'state, proof age, thread id of this execution) and the execution completes with a verdict per rule. Nothing ' +
    'changes on a refused answer. Where the proving identity is made from an Ethereum address, it must be the ' +
    "execution's address (422 otherwise); a BabyJubJub identity encodes no address, and only the delivery of the " +
    "authorization request to the holder's wallet binds it to the address. Limits: ZKP_RESPONSES_PER_MINUTE " +
    'answers per client address (429), ZKP_ANSWERS_PER_EXECUTION answers per execution (429), one proof check at ' +
    `a time per process with ${MAX_WAITING_CHECKS} waiting (503 beyond, with Retry-After).`,
  tags: ['executions'],
  // Wallets POST the token as text; a plain JSON message may come as application/json.
  consumes: ['text/plain', 'application/octet-stream', 'application/json'],
  textTypes: ['text/plain', 'application/octet-stream'],
  bodyLimit: 256 * 1024,
  params: Type.Object({ executionId: Type.String({ minLength: 1, maxLength: 64, description: 'The execution whose authorization request this answers.' }) }, { additionalProperties: false }),
  body: Type.Union([Type.String({ minLength: 1, maxLength: 200_000 }), Type.Object({}, { additionalProperties: true })]),
  ok: { schema: refOf(Execution), description: 'The answer was accepted: the execution, completed, with a verdict per rule.' },
  problems: {
    400: 'The body is not a JWZ token or an iden3comm message this service can read (SCS_VALIDATION, ' +
      'SCS_ZKP_MALFORMED_RESPONSE, SCS_ZKP_UNSUPPORTED_RESPONSE). Nothing changed.',
    404: 'No execution with this id (code SCS_EXECUTION_NOT_FOUND).',
    409: 'Nothing changed. SCS_EXECUTION_NOT_PENDING: the execution has its verdicts already, or failed. ' +
      'SCS_ZKP_THREAD_MISMATCH: the answer is to another authorization request. SCS_ZKP_PROOF_REPLAYED: this ' +
      'proof was used already.',
    410: 'The authorization request expired (code SCS_REQUEST_EXPIRED or SCS_ZKP_REQUEST_EXPIRED): start a new execution and hand its new ' +
      'request to the wallet.',
    413: 'The body is larger than this endpoint accepts (256 KiB).',
    415: 'Send the token as text/plain (or application/octet-stream), or a plain message as application/json.',
    422: 'The proof does not hold, nothing changed: SCS_ZKP_INVALID_TOKEN (the token, its proof or its signature ' +
      'does not verify), SCS_ZKP_RESPONSE_MISMATCH (it answers another question, verifier, address or message). ' +
      'The wallet must prove again.',
    429: 'Nothing changed. SCS_RATE_LIMITED: too many answers from this client address (ZKP_RESPONSES_PER_MINUTE); ' +
      'send again after Retry-After. SCS_TOO_MANY_ANSWERS: this execution took all the answers it may ' +
      '(ZKP_ANSWERS_PER_EXECUTION); start a new execution.',
    503: 'Nothing changed: too many answers are waiting for their proof check (SCS_OVERLOADED), or a service ' +
      'the check needs does not answer (SCS_ZKP_VERIFIER_UNAVAILABLE). Send the same answer again after Retry-After.',
  },
  perClient: { perMinute: (offChain) => offChain.responsesPerMinute, what: 'answers' },
  async handle(offChain, { params, body }) {
    const executionId = params.executionId ?? '';
    const token = typeof body === 'string' ? body.trim() : JSON.stringify(body);
    const outcome = await offChain.answer(executionId, token);
    if (outcome === undefined) throw new ExecutionNotFound(executionId);
    return outcome.execution;
  },
};
