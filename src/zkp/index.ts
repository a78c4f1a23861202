/** Loads @iden3/js-iden3-auth: the service imports the heavy modules through lazy.ts. */
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
