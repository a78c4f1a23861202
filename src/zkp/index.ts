/**
 * OffChainZKP: iden3comm authorization requests and verification of the wallet's zero-knowledge proofs.
 *
 *   at create/patch:  validateZkpQueries(configs, {contexts, documents})  (+ checkZkpQuerySchemas, async)
 *   once:             verifier = await createZkpVerifier({stateResolvers, documentLoader, ...})
 *   at execute:       {request, pending} = buildAuthorizationRequest(configs, {callbackUrl, verifierDid, ...})
 *                     -> answer `pending` results, send `request` to the wallet, persist `pending`
 *   at callback:      verification = await verifyAuthorizationResponse(token, pending, {verifier, now})
 *                     -> verdicts per rule, or a ZkpError (statusCode) and the execution stays unchanged
 *
 * Importing this barrel loads @iden3/js-iden3-auth (~26 MB). The service does not: it imports the modules it needs
 * at start directly, and request.ts, verify.ts and rpc-state.ts through lazy.ts, only where OffChainZKP is configured.
 */
export { buildAuthorizationRequest, type AuthorizationRequest, type PendingAuthorization } from './request.js';
export { validateZkpQueries, toIden3Query, type ZkpQueryConfiguration } from './queries.js';
export { checkZkpQuerySchemas } from './schema-check.js';
export { createZkpVerifier, verifyAuthorizationResponse, peekThreadId, defaultCircuitsDir, type ZkpVerifier } from './verify.js';
export { createDocumentLoader } from '../jsonld/documents.js';
export {
  alwaysLatestStateResolvers, type StateResolver, type StateResolvers, type ResolvedState,
} from './state.js';
export { createRpcStateResolvers } from './rpc-state.js';
export { InMemoryReplayGuard, proofFingerprint } from './replay.js';
export {
  ZkpError, ZkpQueryError, ZkpOptionsError, MalformedResponseError, UnsupportedResponseError, InvalidTokenError,
  ResponseMismatchError, ThreadMismatchError, RequestExpiredError, ProofReplayedError, VerifierUnavailableError,
} from './errors.js';
