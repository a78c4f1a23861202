/**
 * The service's configuration: only from the environment, checked once at start. Each module declares its variables
 * as a TypeBox schema next to its code (service, auth and webhooks in src/config/, the store, trust, chains and ZKP in
 * their own directories); `configSchema` composes them, env-schema checks them, and each module's converter turns the
 * checked values into its options and checks what one value cannot say alone (PUBLIC_BASE_URL with ZKP_VERIFIER_DID,
 * AUTH_JWT_ISSUER with AUTH_JWKS_URL, WORKERS with an in-memory database). README's configuration table is written
 * from the same schemas (`npm run docs:config`; test/config.docs.unit.test.ts fails when it drifts).
 *
 * Blank values: an empty or whitespace-only value is unset, for every variable, exactly as if it were absent (its
 * default applies); other values are trimmed. Every problem is a ConfigError whose one-line message names the variable.
 */
import { chainEnv, chainSettings } from './chain/config.js';
import { zkpEnv, zkpEnvConfig } from './zkp/env.js';
import { trustEnv, trustOptions } from './trust/env.js';
import { databaseConfig, storeEnv } from './store/config.js';
import { attestationConfig, attestationEnv } from './config/attestation.js';
import { authEnv, authSettings } from './config/auth.js';
import type { ConfigSection } from './config/docs.js';
import { ConfigError } from './config/errors.js';
import { serviceEnv, serviceSettings } from './config/service.js';
import { composeSchemas, readEnv, type Env } from './config/variables.js';
import { webhookConfig, webhookEnv } from './config/webhook.js';

export { ConfigError };

export type { Config } from './config/types.js';
import type { Config } from './config/types.js';

/** Every module's variables, in README's order, with the heading and the file that declares them. */
export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  { title: 'Service', source: 'src/config/service.ts', schema: serviceEnv },
  { title: 'Callers', source: 'src/config/auth.ts', schema: authEnv },
  { title: 'Store', source: 'src/store/config.ts', schema: storeEnv },
  { title: 'Credential trust', source: 'src/trust/env.ts', schema: trustEnv },
  { title: 'Chains (OnChainZKP)', source: 'src/chain/config.ts', schema: chainEnv },
  { title: 'Zero-knowledge proofs (OffChainZKP)', source: 'src/zkp/env.ts', schema: zkpEnv },
  { title: 'Webhooks', source: 'src/config/webhook.ts', schema: webhookEnv },
  { title: 'Attestations', source: 'src/config/attestation.ts', schema: attestationEnv },
];

/** Every variable of the service: the modules' schemas composed (a name declared twice throws here, at import). */
export const configSchema = composeSchemas(serviceEnv, authEnv, storeEnv, trustEnv, chainEnv, zkpEnv, webhookEnv, attestationEnv);

/** The configuration of `env` (process.env by default). Throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const values = readEnv(configSchema, env);
  const database = databaseConfig(values);
  const zkp = zkpEnvConfig(values);
  const service = serviceSettings(values, database);
  // Wallets get OffChainZKP callback URLs from PUBLIC_BASE_URL, never from a request's Host header (which any caller
  // sets: `Host: evil.example` would send the wallet's proof elsewhere).
  if (zkp.verifierDid !== undefined && service.publicBaseUrl === undefined) {
    throw new ConfigError('PUBLIC_BASE_URL is required where OffChainZKP is configured (ZKP_VERIFIER_DID is set): the URL wallets send their proofs to');
  }
  const trust = trustOptions(values);
  // Development (the demo issuer, or credentials believed unchecked) in one process: unset attestation keys are made
  // per start. Anywhere else they are off until configured: a key made silently would change at every restart.
  const development = (service.demoIssuer || trust.mode === 'off') && service.workers === 1;
  return {
    ...service,
    database,
    ...authSettings(values),
    trust,
    chains: chainSettings(values),
    zkp,
    webhook: webhookConfig(values),
    attestation: attestationConfig(values, development),
  };
}
