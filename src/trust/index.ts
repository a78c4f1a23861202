/** The engine stays pure: the caller runs `verify` before runPlan and hands the verdicts in as RunInput.trust. */
export { createCredentialVerifier } from './verifier.js';
export type { CredentialVerifier, TrustDeps, TrustOptions, TrustVerdict } from './types.js';
export { ColdWorkRefused, CredentialTooLarge } from './errors.js';
export { defaultThreads } from './pool.js';
