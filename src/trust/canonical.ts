/** Canonical JSON and content digests: one implementation for the service (src/domain/canonical-json.ts). */
export { canonicalJson, contentDigest as contentHash } from '../domain/canonical-json.js';
