import { chainEnv, chainSettings } from './chain/config.js';
import { deployEnv, deploySettings } from './chain/deploy-config.js';
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

export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  { title: 'Service', source: 'src/config/service.ts', schema: serviceEnv },
  { title: 'Callers', source: 'src/config/auth.ts', schema: authEnv },
  { title: 'Store', source: 'src/store/config.ts', schema: storeEnv },
  { title: 'Credential trust', source: 'src/trust/env.ts', schema: trustEnv },
  { title: 'Chains (OnChainZKP)', source: 'src/chain/config.ts', schema: chainEnv },
  { title: 'Deploying scenarios (OnChainZKP)', source: 'src/chain/deploy-config.ts', schema: deployEnv },
  { title: 'Zero-knowledge proofs (OffChainZKP)', source: 'src/zkp/env.ts', schema: zkpEnv },
  { title: 'Webhooks', source: 'src/config/webhook.ts', schema: webhookEnv },
  { title: 'Attestations', source: 'src/config/attestation.ts', schema: attestationEnv },
];

/** A name declared twice throws here, at import. */
export const configSchema = composeSchemas(serviceEnv, authEnv, storeEnv, trustEnv, chainEnv, deployEnv, zkpEnv, webhookEnv, attestationEnv);

export function loadConfig(env: Env = process.env): Config {
  const values = readEnv(configSchema, env);
  const database = databaseConfig(values);
  const zkp = zkpEnvConfig(values);
  const service = serviceSettings(values, database);
  // Wallets get callback URLs from PUBLIC_BASE_URL, never from a request's Host, which any caller sets.
  if (zkp.verifierDid !== undefined && service.publicBaseUrl === undefined) {
    throw new ConfigError('PUBLIC_BASE_URL is required where OffChainZKP is configured (ZKP_VERIFIER_DID is set): the URL wallets send their proofs to');
  }
  const trust = trustOptions(values);
  // Elsewhere off until configured: a key made silently would change at every restart.
  const development = (service.demoIssuer || trust.mode === 'off') && service.workers === 1;
  return {
    ...service,
    database,
    ...authSettings(values),
    trust,
    chains: chainSettings(values),
    deploy: deploySettings(values),
    zkp,
    webhook: webhookConfig(values),
    attestation: attestationConfig(values, development),
  };
}
