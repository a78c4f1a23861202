export { createCredentialVerifier } from './verifier.js';
export type { CredentialVerifier, TrustDeps, TrustOptions, TrustVerdict } from './types.js';
export { ColdWorkRefused, CredentialTooLarge } from './errors.js';
export { defaultThreads } from './pool.js';
