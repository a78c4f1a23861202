/**
 * Credential trust: proofs, trusted issuers, revocation and holder binding. The engine stays pure: the caller runs
 * `verify` before runPlan and hands the verdicts in as RunInput.trust (same order as the credentials).
 */
export { createCredentialVerifier, DEFAULTS } from './verifier.js';
export type { CredentialVerifier, TrustDeps, TrustOptions, TrustVerdict, VerifyContext } from './types.js';
export { trustOptionsFromEnv } from './env.js';
export type { StatusResolverFn, RevocationRequest, StatusIo } from './revocation.js';
export { StatusFailure, verifyStatusAnswer } from './revocation.js';
export type { FetchLike } from './http.js';
export { ID_INFORMATION_CONTEXT_URL, ID_INFORMATION_SCHEMA_URL } from './documents.js';
export { holderAddressOf } from './holder.js';
export { ColdWorkRefused, defaultThreads } from './pool.js';
export { CredentialTooLarge } from './limits.js';
