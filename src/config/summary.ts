/** Never a password, token or full URL. */
import type { AddressInfo } from 'node:net';
import { describeDatabase } from '../store/config.js';
import { DEMO_ISSUER_DID } from '../trust/demo-did.js';
import type { Config } from './types.js';

export interface StartupSummary {
  fields: {
    database: string;
    verification: 'strict' | 'off';
    /** The demo issuer counted; `*` for any. */
    trustedIssuers: number | '*';
    offChainZkp: boolean;
    onChainZkp: boolean;
    /** Off (no WEBHOOK_SECRET); on for scenarios with a webhookUrl; on for every execution (WEBHOOK_URL). */
    webhooks: 'off' | 'scenarios' | 'all';
    attestations: ('jws' | 'eip712')[];
    /** REDIS_URL: shared across instances. */
    budgets: 'per-process' | 'shared';
    docs: string | null;
  };
  msg: string;
  /** When the configuration leaves every credential failing. */
  warning?: string;
}

/** A wildcard address (0.0.0.0, ::) is reached as localhost. */
function baseUrl({ address, family, port }: AddressInfo): string {
  if (address === '0.0.0.0' || address === '::') return `http://localhost:${port}`;
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
}

function webhookPart(config: Config): [StartupSummary['fields']['webhooks'], string] {
  if (config.webhook === undefined) return ['off', 'webhooks off (set WEBHOOK_SECRET to enable)'];
  return config.webhook.url === undefined
    ? ['scenarios', 'webhooks on for scenarios with a webhookUrl (WEBHOOK_URL unset)']
    : ['all', `webhooks on (every execution to ${new URL(config.webhook.url).origin}, unless its scenario names another)`];
}

function attestationPart({ jwks, eip712Key }: Config['attestation']): [StartupSummary['fields']['attestations'], string] {
  const on = [
    ...(jwks === undefined ? [] : [['jws', jwks === 'generate'] as const]),
    ...(eip712Key === undefined ? [] : [['eip712', eip712Key === 'generate'] as const]),
  ];
  if (on.length === 0) return [[], 'attestations off (set ATTESTATION_JWKS or ATTESTATION_EIP712_KEY to enable)'];
  const names = on.map(([kind, made]) => `${kind === 'jws' ? 'JWS' : 'EIP-712'}${made ? ' (key made for this run only)' : ''}`);
  return [on.map(([kind]) => kind), `attestations on: ${names.join(', ')}`];
}

export function startupSummary(config: Config, address: AddressInfo): StartupSummary {
  const { mode, trustedIssuers: listed } = config.trust;
  const trustedIssuers = listed === '*' ? '*' : listed.length + (config.demoIssuer ? 1 : 0);
  const offChainZkp = config.zkp.verifierDid !== undefined;
  const chains = [...config.chains.chains.keys()];
  const docs = config.docs ? `${baseUrl(address)}/docs` : null;
  const database = describeDatabase(config.database);
  const [webhooks, webhookText] = webhookPart(config);
  const [attestations, attestationText] = attestationPart(config.attestation);

  const issuers = trustedIssuers === '*' ? 'any issuer trusted (TRUSTED_ISSUERS=*)' : `${trustedIssuers} trusted issuer${trustedIssuers === 1 ? '' : 's'}`;
  const msg = [
    `ready: database ${database}`,
    mode === 'off' ? 'credential verification off (CREDENTIAL_VERIFICATION=off)' : `credential verification strict, ${issuers}`,
    offChainZkp ? 'OffChainZKP on' : 'OffChainZKP off (set ZKP_VERIFIER_DID and PUBLIC_BASE_URL to enable)',
    chains.length > 0 ? `OnChainZKP on (${chains.join(', ')})` : 'OnChainZKP off (set CHAIN_RPC_URLS to enable)',
    webhookText,
    attestationText,
    ...(config.redis ? ['budgets shared across instances through Redis (REDIS_URL)'] : []),
    docs === null ? 'docs off (DOCS_ENABLED=false)' : `docs ${docs}`,
  ].join('; ');
  // The two cannot both hold: one lists no issuer, the other lists the demo issuer.
  const warning = mode === 'strict' && trustedIssuers === 0
    ? 'TRUSTED_ISSUERS is empty: every credential will fail the trusted-issuer check (not-valid). Set TRUSTED_ISSUERS to ' +
      'the DIDs of the issuers you trust (or DEMO_ISSUER=1 to try the service with demo credentials)'
    : mode === 'strict' && !config.demoIssuer && listed !== '*' && listed.includes(DEMO_ISSUER_DID)
      ? `TRUSTED_ISSUERS lists the demo issuer (${DEMO_ISSUER_DID}) but DEMO_ISSUER is unset: its credentials' ` +
        'revocation status is answered by this service only with DEMO_ISSUER=1, so they will answer error ' +
        '("credentialStatus … cannot be resolved"). Set DEMO_ISSUER=1 (it trusts the demo issuer itself)'
      : undefined;
  return {
    fields: { database, verification: mode, trustedIssuers, offChainZkp, onChainZkp: chains.length > 0, webhooks, attestations, budgets: config.redis ? 'shared' : 'per-process', docs },
    msg,
    warning,
  };
}
