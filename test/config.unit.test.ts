import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { CONFIG_SECTIONS, ConfigError, configSchema, loadConfig } from '../src/config.js';
import { composeSchemas } from '../src/config/variables.js';
import { VERIFIER_DID } from './zkp/fixtures.js';
import { tempDir } from './helpers.js';

type Env = Record<string, string>;

const aFile = path.join(tempDir('scs-config-'), 'not-a-dir');
fs.writeFileSync(aFile, '{}');
const jwks = { AUTH_JWKS_URL: 'https://id.example/.well-known/jwks.json' };

/** For every variable, a bad value (with what else it needs to be read): each must stop loadConfig naming it. */
const BAD: [variable: string, env: Env][] = [
  ['PORT', { PORT: '65536' }],
  ['HOST', { HOST: 'my host' }],
  ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'ftp://svc.example' }],
  ['PUBLIC_BASE_URL', { ZKP_VERIFIER_DID: VERIFIER_DID }],
  ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'https://svc.example/base?tenant=a' }],
  ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'https://svc.example/#x' }],
  ['TRUST_PROXY', { TRUST_PROXY: '10.0.0.0/8,proxy.internal' }],
  ['TRUST_PROXY', { TRUST_PROXY: '10.0.0.0/33' }],
  ['SHUTDOWN_DELAY_MS', { SHUTDOWN_DELAY_MS: '600001' }],
  ['TRUST_PROXY', { TRUST_PROXY: '::1/129' }],
  ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
  ['BODY_LIMIT', { BODY_LIMIT: '1023' }],
  ['DOCS_ENABLED', { DOCS_ENABLED: 'maybe' }],
  ['CONSOLE', { CONSOLE: 'maybe' }],
  ['CORS_ORIGINS', { CORS_ORIGINS: '*' }],
  ['CORS_ORIGINS', { CORS_ORIGINS: 'https://app.example.com/' }],
  ['SHUTDOWN_TIMEOUT_MS', { SHUTDOWN_TIMEOUT_MS: '-1' }],
  ['RATE_LIMIT_MAX', { RATE_LIMIT_MAX: '1e3' }],
  ['RATE_LIMIT_WINDOW_MS', { RATE_LIMIT_WINDOW_MS: '999' }],
  ['REDIS_URL', { REDIS_URL: 'http://cache.internal:6379' }],
  ['REDIS_URL', { REDIS_URL: 'redis://[bad' }],
  ['REDIS_KEY_PREFIX', { REDIS_KEY_PREFIX: 'scs prod' }],
  ['REDIS_COMMAND_TIMEOUT_MS', { REDIS_COMMAND_TIMEOUT_MS: '5' }],
  ['MAX_EVENT_LOOP_DELAY_MS', { MAX_EVENT_LOOP_DELAY_MS: '60001' }],
  ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '1.5' }],
  ['WORKERS', { WORKERS: '0' }],
  ['WORKERS', { WORKERS: '2', DATABASE_URL: 'sqlite://:memory:' }],
  ['DEMO_ISSUER', { DEMO_ISSUER: 'demo' }],
  ['EXECUTION_RETENTION_DAYS', { EXECUTION_RETENTION_DAYS: '0' }],
  ['EXECUTION_PURGE_INTERVAL_MS', { EXECUTION_PURGE_INTERVAL_MS: '0x10' }],
  ['API_TOKENS', { API_TOKENS: 'short' }],
  ['API_TOKENS', { API_TOKENS: 'long-enough-token-0123:proj a' }],
  ['AUTH_JWKS_URL', { AUTH_JWKS_URL: 'ftp://id.example/jwks' }],
  ['AUTH_JWT_ISSUER', { ...jwks, AUTH_JWT_AUDIENCE: 'svc' }],
  ['AUTH_JWT_AUDIENCE', { ...jwks, AUTH_JWT_ISSUER: 'https://id.example' }],
  ['AUTH_JWT_PROJECTS_CLAIM', { AUTH_JWT_PROJECTS_CLAIM: 'my projects' }],
  ['SCENARIO_APPROVAL_PROJECTS', { SCENARIO_APPROVAL_PROJECTS: 'projA,proj b' }],
  ['DATABASE_URL', { DATABASE_URL: 'mysql://db.example/x' }],
  ['DATABASE_URL', { DATABASE_URL: 'postgres://[bad' }],
  ['DATA_DIR', { DATA_DIR: aFile }],
  ['DATABASE_SCHEMA', { DATABASE_SCHEMA: 'Public' }],
  ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: '0' }],
  ['DATABASE_STATEMENT_TIMEOUT_MS', { DATABASE_STATEMENT_TIMEOUT_MS: '9' }],
  ['DATABASE_CONNECT_TIMEOUT_MS', { DATABASE_CONNECT_TIMEOUT_MS: '600001' }],
  ['SQLITE_SYNCHRONOUS', { SQLITE_SYNCHRONOUS: 'OFF' }],
  ['CREDENTIAL_VERIFICATION', { CREDENTIAL_VERIFICATION: 'lenient' }],
  ['TRUSTED_ISSUERS', { TRUSTED_ISSUERS: 'issuer-a' }],
  ['DID_RESOLVER_URL', { DID_RESOLVER_URL: 'ftp://resolver.example' }],
  ['ISSUER_STATE_SOURCE', { ISSUER_STATE_SOURCE: 'ethereum' }],
  ['ISSUER_STATE_CONTRACTS', { ISSUER_STATE_CONTRACTS: 'eip155:80002=0x1234' }],
  ['TRUST_HTTP_TIMEOUT_MS', { TRUST_HTTP_TIMEOUT_MS: '0' }],
  ['REVOCATION_CACHE_MS', { REVOCATION_CACHE_MS: '86400001' }],
  ['DID_RESOLVER_CACHE_MS', { DID_RESOLVER_CACHE_MS: 'soon' }],
  ['CREDENTIAL_CACHE_SIZE', { CREDENTIAL_CACHE_SIZE: '10000001' }],
  ['REQUIRE_HOLDER_BINDING', { REQUIRE_HOLDER_BINDING: 'maybe' }],
  ['JSONLD_DOCUMENTS_FILE', { JSONLD_DOCUMENTS_FILE: '/nonexistent/documents.json' }],
  ['JSONLD_REMOTE_PREFIXES', { JSONLD_REMOTE_PREFIXES: 'https://schemas.example' }],
  ['VERIFY_THREADS', { VERIFY_THREADS: '65' }],
  ['COLD_QUEUE_PER_TOKEN', { COLD_QUEUE_PER_TOKEN: '0' }],
  ['COLD_QUEUE_MAX', { COLD_QUEUE_MAX: '100001' }],
  ['TRUST_REFUSAL_CACHE_MS', { TRUST_REFUSAL_CACHE_MS: '-5' }],
  ['MAX_CREDENTIAL_BYTES', { MAX_CREDENTIAL_BYTES: '1023' }],
  ['MAX_CREDENTIAL_LEAVES', { MAX_CREDENTIAL_LEAVES: '15' }],
  ['CHAIN_RPC_URLS', { CHAIN_RPC_URLS: 'eip155:1' }],
  ['CHAIN_DEFAULT', { CHAIN_DEFAULT: 'mainnet' }],
  ['CHAIN_DEFAULT', { CHAIN_RPC_URLS: 'eip155:5=http://a.example', CHAIN_DEFAULT: 'eip155:6' }],
  ['CHAIN_READ_TIMEOUT_MS', { CHAIN_READ_TIMEOUT_MS: '99' }],
  ['CHAIN_CACHE_TTL_MS', { CHAIN_CACHE_TTL_MS: '3600001' }],
  ['CHAIN_CACHE_MAX_ENTRIES', { CHAIN_CACHE_MAX_ENTRIES: '0' }],
  ['CHAIN_ERROR_TTL_MS', { CHAIN_ERROR_TTL_MS: '600001' }],
  ['CHAIN_MULTICALL', { CHAIN_MULTICALL: 'yes' }],
  ['CHAIN_TXHASH_LOOKBACK_BLOCKS', { CHAIN_TXHASH_LOOKBACK_BLOCKS: '100000001' }],
  ['CHAIN_ALLOW_UNCHECKED_REQUESTS', { CHAIN_ALLOW_UNCHECKED_REQUESTS: 'maybe' }],
  ['CHAIN_FOLLOW_INTERVAL_MS', { CHAIN_FOLLOW_INTERVAL_MS: '99' }],
  ['CHAIN_CONFIRMATIONS', { CHAIN_CONFIRMATIONS: '0' }],
  ['CHAIN_TX_DROP_AFTER_MS', { CHAIN_TX_DROP_AFTER_MS: '999' }],
  ['CHAIN_DEPLOYER_KEY', { CHAIN_DEPLOYER_KEY: `0x${'ab'.repeat(31)}` }],
  ['CHAIN_DEPLOYER_KEY_FILE', { CHAIN_DEPLOYER_KEY_FILE: '/nonexistent/deployer.key' }],
  ['CHAIN_VERIFIER_ADDRESS', { CHAIN_VERIFIER_ADDRESS: 'eip155:1=0x1234' }],
  ['CHAIN_VALIDATORS', { CHAIN_VALIDATORS: 'mainnet=0x0000000000000000000000000000000000000001' }],
  ['CHAIN_MAX_FEE_PER_GAS', { CHAIN_MAX_FEE_PER_GAS: '1e9' }],
  ['CHAIN_REPLACE_AFTER_MS', { CHAIN_REPLACE_AFTER_MS: '86400001' }],
  ['CHAIN_DEPLOY_MAX_GAS', { CHAIN_DEPLOY_MAX_GAS: '20999' }],
  ['CHAIN_RPC_BATCH_LIMIT', { CHAIN_RPC_BATCH_LIMIT: '0' }],
  ['CHAIN_FOLLOW_MAX_TXS', { CHAIN_FOLLOW_MAX_TXS: '0' }],
  ['ZKP_VERIFIER_DID', { ZKP_VERIFIER_DID: 'did:x', PUBLIC_BASE_URL: 'https://svc.example' }],
  ['ZKP_REQUEST_TTL_SECONDS', { ZKP_REQUEST_TTL_SECONDS: '0' }],
  ['ZKP_DEFAULT_CIRCUIT_ID', { ZKP_DEFAULT_CIRCUIT_ID: 'credentialAtomicQuerySigV1' }],
  ['ZKP_CONTEXTS', { ZKP_CONTEXTS: '[]' }],
  ['ZKP_ALLOWED_ISSUERS', { ZKP_ALLOWED_ISSUERS: 'me' }],
  ['ZKP_CIRCUITS_DIR', { ZKP_CIRCUITS_DIR: aFile }],
  ['ZKP_STATE_RESOLVERS', { ZKP_STATE_RESOLVERS: '{"polygon":{}}' }],
  ['ZKP_STATE_RESOLVERS', { ZKP_STATE_RESOLVERS: 'not json' }],
  ['ZKP_PROOF_MAX_AGE_SECONDS', { ZKP_PROOF_MAX_AGE_SECONDS: '10000000000' }],
  ['ZKP_CLOCK_SKEW_SECONDS', { ZKP_CLOCK_SKEW_SECONDS: 'five' }],
  ['ZKP_STATE_TRANSITION_DELAY_SECONDS', { ZKP_STATE_TRANSITION_DELAY_SECONDS: '-1' }],
  ['ZKP_ALLOW_PLAIN_RESPONSES', { ZKP_ALLOW_PLAIN_RESPONSES: 'yes' }],
  ['ZKP_RESPONSES_PER_MINUTE', { ZKP_RESPONSES_PER_MINUTE: '1000000' }],
  ['DRY_RUNS_PER_MINUTE', { DRY_RUNS_PER_MINUTE: '100000001' }],
  ['SUMMARIES_PER_MINUTE', { SUMMARIES_PER_MINUTE: '-1' }],
  ['SUMMARY_MAX_EXECUTIONS', { SUMMARY_MAX_EXECUTIONS: '0' }],
  ['SHADOW_QUEUE_LIMIT', { SHADOW_QUEUE_LIMIT: '-1' }],
  ['SHADOW_QUEUE_LIMIT', { SHADOW_QUEUE_LIMIT: '10001' }],
  ['SHADOW_QUEUE_BYTES', { SHADOW_QUEUE_BYTES: '2147483648' }],
  ['ZKP_ANSWERS_PER_EXECUTION', { ZKP_ANSWERS_PER_EXECUTION: '0' }],
  ['WEBHOOK_URL', { WEBHOOK_URL: 'ftp://hooks.example' }],
  ['WEBHOOK_SECRET', { WEBHOOK_URL: 'https://hooks.example', WEBHOOK_SECRET: 'short' }],
  ['WEBHOOK_SECRET', { WEBHOOK_SECRET: 'not-a-whsec-secret-0123456789abcdef' }],
  ['WEBHOOK_SECRET', { WEBHOOK_URL: 'https://hooks.example' }],
  ['WEBHOOK_ALLOW_PRIVATE_TARGETS', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sometimes' }],
  ['WEBHOOK_MAX_ATTEMPTS', { WEBHOOK_MAX_ATTEMPTS: '101' }],
  ['WEBHOOK_RETRY_BASE_MS', { WEBHOOK_RETRY_BASE_MS: '9' }],
  ['WEBHOOK_TIMEOUT_MS', { WEBHOOK_TIMEOUT_MS: '99' }],
  ['WEBHOOK_POLL_MS', { WEBHOOK_POLL_MS: '60001' }],
  ['ATTESTATION_JWKS', { ATTESTATION_JWKS: '{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b","alg":"ES256","kid":"k"}]}' }],
  ['ATTESTATION_JWKS_FILE', { ATTESTATION_JWKS_FILE: '/nonexistent/jwks.json' }],
  ['ATTESTATION_EIP712_KEY', { ATTESTATION_EIP712_KEY: '0x1234' }],
  ['ATTESTATION_EIP712_KEY_FILE', { ATTESTATION_EIP712_KEY_FILE: '/nonexistent/key' }],
  ['ATTESTATION_TTL_SECONDS', { ATTESTATION_TTL_SECONDS: '5' }],
  ['ATTESTATION_ISSUER', { ATTESTATION_ISSUER: 'has spaces' }],
];

describe('a deployer key', () => {
  it('is never quoted in the refusal of a malformed one, not even in part', () => {
    const key = `0x${'5e'.repeat(31)}7`;
    const { message } = errorOf({ CHAIN_DEPLOYER_KEY: `eip155:1=${key}` });
    expect(message).toMatch(/^CHAIN_DEPLOYER_KEY: entry 1 is not a private key/);
    expect(message).not.toContain('5e5e');
  });
});

/** The ConfigError loadConfig throws for `env`, or a failure when it throws nothing or something else. */
function errorOf(env: Env): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig refuses bad values', () => {
  it('has a bad value for every variable of the schema', () => {
    expect(new Set(BAD.map(([name]) => name))).toEqual(new Set(Object.keys(configSchema.properties)));
  });

  it.each(BAD)('%s: %j', (name, env) => {
    const { message } = errorOf(env);
    // The message starts with the variable it is about (not merely mentions it beside another's).
    expect(message).toMatch(new RegExp(`^${name}([^A-Z_]|$)`));
    expect(message).not.toContain('\n');
  });

  it('says what it expected and what it got, in one line', () => {
    expect(errorOf({ PORT: 'abc' }).message).toBe('PORT must be an integer from 0 to 65535 (got "abc")');
    expect(errorOf({ WORKERS: ' many ' }).message).toBe('WORKERS must be auto or an integer from 1 to 64 (got " many ")');
    expect(errorOf({ LOG_LEVEL: 'loud' }).message).toBe('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")');
    expect(errorOf({ CHAIN_MULTICALL: 'yes' }).message).toBe('CHAIN_MULTICALL must be auto or off (got "yes")');
    expect(errorOf({ DOCS_ENABLED: 'maybe' }).message).toBe('DOCS_ENABLED must be true or false (got "maybe")');
    expect(errorOf({ DATABASE_SCHEMA: 'Public' }).message)
      .toBe('DATABASE_SCHEMA must be a lowercase SQL identifier (a-z, 0-9, _; at most 63 characters)');
  });

  it('never quotes a text value: URLs carry passwords and API keys', () => {
    expect(errorOf({ DATABASE_URL: 'mysql://user:SECRET@db.example/x' }).message).not.toContain('SECRET');
    expect(errorOf({ CHAIN_RPC_URLS: 'eip155:1=ftp://rpc.example/SECRET' }).message).not.toContain('SECRET');
    expect(errorOf({ HOST: 'SECRET host' }).message).not.toContain('SECRET');
  });

  it('takes integers as decimal digits only', () => {
    for (const bad of ['0x10', '1e3', '+5', '5.0', '-0', '٣']) expect(errorOf({ PORT: bad }).message).toMatch(/^PORT must be/);
  });

  it('checks every variable, also one its setting makes unused', () => {
    expect(errorOf({ DATABASE_POOL_SIZE: '0' }).message).toMatch(/^DATABASE_POOL_SIZE/);
    expect(errorOf({ WEBHOOK_MAX_ATTEMPTS: '0' }).message).toMatch(/^WEBHOOK_MAX_ATTEMPTS/);
  });
});

describe('the composed schema', () => {
  it('is every section\'s variables, each declared once', () => {
    const names = CONFIG_SECTIONS.flatMap((s) => Object.keys(s.schema.properties));
    expect(new Set(names).size).toBe(names.length);
    expect(names.sort()).toEqual(Object.keys(configSchema.properties).sort());
  });

  it('refuses a variable declared by two modules', () => {
    const a = Type.Object({ PORT: Type.Integer() });
    expect(() => composeSchemas(a, Type.Object({ PORT: Type.String() }))).toThrow(/PORT is declared twice/);
  });

  it('describes every variable for the configuration table', () => {
    for (const [name, variable] of Object.entries(configSchema.properties)) {
      expect(variable.description, name).toMatch(/\S/);
    }
  });
});
