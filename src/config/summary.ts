/** What the service runs with, logged once at start: never a password, token or full URL. */
import type { AddressInfo } from 'node:net';
import { describeDatabase } from '../store/config.js';
import type { Config } from './types.js';

export interface StartupSummary {
  fields: {
    database: string;
    verification: 'strict' | 'off';
    /** The demo issuer counted; `*` for any. */
    trustedIssuers: number | '*';
    offChainZkp: boolean;
    onChainZkp: boolean;
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

export function startupSummary(config: Config, address: AddressInfo): StartupSummary {
  const { mode, trustedIssuers: listed } = config.trust;
  const trustedIssuers = listed === '*' ? '*' : listed.length + (config.demoIssuer ? 1 : 0);
  const offChainZkp = config.zkp.verifierDid !== undefined;
  const chains = [...config.chains.chains.keys()];
  const docs = config.docs ? `${baseUrl(address)}/docs` : null;
  const database = describeDatabase(config.database);

  const issuers = trustedIssuers === '*' ? 'any issuer trusted (TRUSTED_ISSUERS=*)' : `${trustedIssuers} trusted issuer${trustedIssuers === 1 ? '' : 's'}`;
  const msg = [
    `ready: database ${database}`,
    mode === 'off' ? 'credential verification off (CREDENTIAL_VERIFICATION=off)' : `credential verification strict, ${issuers}`,
    offChainZkp ? 'OffChainZKP on' : 'OffChainZKP off (set ZKP_VERIFIER_DID and PUBLIC_BASE_URL to enable)',
    chains.length > 0 ? `OnChainZKP on (${chains.join(', ')})` : 'OnChainZKP off (set CHAIN_RPC_URLS to enable)',
    docs === null ? 'docs off (DOCS_ENABLED=false)' : `docs ${docs}`,
  ].join('; ');
  const warning = mode === 'strict' && trustedIssuers === 0
    ? 'TRUSTED_ISSUERS is empty: every credential will fail the trusted-issuer check (not-valid). Set TRUSTED_ISSUERS to ' +
      'the DIDs of the issuers you trust (or DEMO_ISSUER=1 to try the service with demo credentials)'
    : undefined;
  return {
    fields: { database, verification: mode, trustedIssuers, offChainZkp, onChainZkp: chains.length > 0, docs },
    msg,
    warning,
  };
}
