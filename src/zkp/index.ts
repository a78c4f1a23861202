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
export {
  buildAuthorizationRequest, AUTHORIZATION_REQUEST_TYPE, AUTHORIZATION_RESPONSE_TYPE,
  DEFAULT_ACCEPT, DEFAULT_REQUEST_TTL_MS, PLAIN_MEDIA_TYPE, ZKP_MEDIA_TYPE,
  type AuthorizationRequest, type AuthorizationRequestOptions, type BuiltAuthorizationRequest, type PendingAuthorization,
  type PendingRule, type ZkpScopeEntry,
} from './request.js';
export { isCanonicalIden3Did, isCanonicalDid } from './did.js';
export {
  validateZkpQueries, contextOf, circuitOf, toIden3Query, ZKP_CIRCUIT_IDS, DEFAULT_ZKP_CIRCUIT_ID, ZKP_V2_OPERATORS,
  ZKP_V2_MAX_VALUES, ZKP_MAX_REQUEST_ID,
  type ZkpCircuitId, type ZkpQuery, type ZkpQueryConfiguration, type ZkpQueryOptions,
} from './queries.js';
export { checkZkpQuerySchemas, type SchemaCheckOptions } from './schema-check.js';
export {
  createZkpVerifier, verifyAuthorizationResponse, peekThreadId, defaultCircuitsDir,
  DEFAULT_PROOF_MAX_AGE_MS, DEFAULT_CLOCK_SKEW_MS, DEFAULT_STATE_TRANSITION_DELAY_MS, MAX_TOKEN_LENGTH,
  type ZkpVerifier, type ZkpVerifierOptions, type ZkpVerification, type ZkpVerdict, type VerdictStatus, type VerifyCallOptions,
} from './verify.js';
export { createDocumentLoader, readDocumentsFile, bundledDocuments, type OfflineDocumentLoader, type DocumentLoaderOptions } from './documents.js';
export {
  alwaysLatestStateResolvers, parseStateResolversConfig,
  type StateResolver, type StateResolvers, type ResolvedState, type RpcChainConfig,
} from './state.js';
export { createRpcStateResolvers, type RpcStateCacheOptions } from './rpc-state.js';
export { InMemoryReplayGuard, proofFingerprint, type ProofReplayGuard } from './replay.js';
export {
  ZkpError, ZkpQueryError, ZkpOptionsError, MalformedResponseError, UnsupportedResponseError, InvalidTokenError,
  ResponseMismatchError, ThreadMismatchError, RequestExpiredError, ProofReplayedError, VerifierUnavailableError,
  DocumentNotAvailableError, isZkpError, type ZkpErrorCode,
} from './errors.js';
export { readZkpEnv, type ZkpEnvConfig } from './env.js';
