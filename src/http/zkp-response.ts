import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { MAX_WAITING_CHECKS, callbackPath, type OffChainZkp } from '../execution/offchain-zkp/strategy.js';
import { refOf } from '../schemas/common.js';
import { Execution } from '../schemas/execution.js';
import { ExecutionNotFound, rateLimited } from './errors.js';
import { answered, problemResponses } from './responses.js';

export interface ZkpResponseRoutesOptions {
  offChain: OffChainZkp;
  /** Answers per client address and minute (ZKP_RESPONSES_PER_MINUTE); 0 = only the service-wide limit. */
  responsesPerMinute: number;
}

/**
 * The wallet's callback for OffChainZKP: outside bearer auth (the wallet has no token; the proof and the thread id bind
 * it). The strategy decides; its refusals carry their status and code, which the problem handler answers.
 */
export const zkpResponseRoutes: FastifyPluginAsyncTypebox<ZkpResponseRoutesOptions> = async (app, { offChain, responsesPerMinute }) => {
  // Wallets POST the token as text; a plain JSON message may come as application/json.
  app.addContentTypeParser(['text/plain', 'application/octet-stream'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
  // Anyone may answer (no token), and an answer whose cheap checks pass costs a proof check: a limit per client
  // address (besides the service-wide one), a budget per execution and one check at a time bound that cost.
  const perAddress = responsesPerMinute > 0 && {
    max: responsesPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => `zkp-response:${request.ip}`,
    errorResponseBuilder: (_request: FastifyRequest, context: { max: number; after: string; ttl: number }) =>
      rateLimited(`Rate limit exceeded: at most ${context.max} answers a minute from this client address; retry in ${context.after}`, context),
  };
  app.post(callbackPath(':executionId'), {
    // Instead of the service-wide limit (protection.ts); off with RATE_LIMIT_MAX=0, like every rate limit.
    ...(perAddress && { config: { rateLimit: perAddress } }),
    bodyLimit: 256 * 1024,
    schema: {
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
      consumes: ['text/plain', 'application/octet-stream', 'application/json'],
      params: Type.Object({ executionId: Type.String({ minLength: 1, maxLength: 64, description: 'The execution whose authorization request this answers.' }) }, { additionalProperties: false }),
      body: Type.Union([Type.String({ minLength: 1, maxLength: 200_000 }), Type.Object({}, { additionalProperties: true })]),
      response: {
        200: answered(refOf(Execution), 'The answer was accepted: the execution, completed, with a verdict per rule.'),
        ...problemResponses([400, 404, 409, 410, 413, 415, 422, 429, 503], {
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
        }),
      },
    },
  }, async (request) => {
    const { executionId } = request.params;
    const body = request.body;
    const token = typeof body === 'string' ? body.trim() : JSON.stringify(body);
    const outcome = await offChain.answer(executionId, token);
    if (outcome === undefined) throw new ExecutionNotFound(executionId);
    return outcome.execution;
  });
};
