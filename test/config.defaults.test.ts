import path from 'node:path';
import os from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { configSchema, loadConfig, type Config } from '../src/config.js';
import { defaultThreads } from '../src/trust/index.js';

const DEFAULTS: Config = {
  port: 3000,
  host: '0.0.0.0',
  database: { kind: 'sqlite', file: path.resolve('./data', 'scenarios.db'), synchronous: 'NORMAL' },
  apiTokens: [],
  jwt: undefined,
  approvalProjects: [],
  logLevel: 'info',
  bodyLimit: 1024 * 1024,
  docs: true,
  console: true,
  corsOrigins: [],
  shutdownTimeoutMs: 10_000,
  shutdownDelayMs: 0,
  rateLimit: { max: 6000, windowMs: 60_000 },
  dryRunsPerMinute: 60,
  summariesPerMinute: 30,
  summaryMaxExecutions: 100_000,
  shadowQueueLimit: 256,
  shadowQueueBytes: 33554432,
  maxEventLoopDelayMs: 1000,
  requestTimeoutMs: 30_000,
  trust: {
    mode: 'strict', trustedIssuers: [], resolverUrl: undefined, timeoutMs: 3000, revocationCacheMs: 60_000,
    resolverCacheMs: 3_600_000, issuerStates: { source: 'resolver', contracts: {} }, cacheSize: 10_000, requireHolderBinding: false, documents: undefined, remoteDocumentPrefixes: [],
    threads: defaultThreads(), coldQueue: 256, coldPerTenant: 100, refusalCacheMs: 30_000, maxCredentialBytes: 65_536, maxCredentialLeaves: 256,
  },
  demoIssuer: false,
  chains: {
    chains: new Map(), defaultChain: undefined, timeoutMs: 3000, cacheTtlMs: 5000, cacheMaxEntries: 10_000, errorTtlMs: 1000,
    multicall: 'auto', txHashLookbackBlocks: 10_000, allowUncheckedRequests: false,
    followIntervalMs: 5000, confirmations: 12, txDropAfterMs: 1_800_000, rpcBatchLimit: 100, followMaxTxs: 5000,
  },
  deploy: { keys: new Map(), verifiers: new Map(), validators: new Map(), maxFeePerGas: 500_000_000_000n, maxGas: 10_000_000n, replaceAfterMs: 180_000 },
  zkp: {
    verifierDid: undefined, requestTtlMs: 600_000, defaultCircuitId: 'credentialAtomicQuerySigV2', contexts: {}, allowedIssuers: ['*'],
    circuitsDir: undefined, stateResolvers: {}, proofMaxAgeMs: 3_600_000, clockSkewMs: 300_000,
    stateTransitionDelayMs: 3_600_000, allowPlainMessages: false, responsesPerMinute: 30, answersPerExecution: 5,
  },
  publicBaseUrl: undefined,
  trustProxy: [],
  attestation: { ttlSeconds: 600 },
  webhook: undefined,
  executionRetentionDays: 90,
  executionPurgeIntervalMs: 3_600_000,
  workers: 1,
};

const names = Object.keys(configSchema.properties);

describe('loadConfig defaults', () => {
  it('has the documented default for every variable left unset', () => {
    expect(loadConfig({})).toEqual(DEFAULTS);
  });

  afterEach(() => vi.unstubAllEnvs());

  it('reads nothing but the environment it is given', () => {
    vi.stubEnv('PORT', '1234');
    expect(loadConfig({ UNRELATED: 'x' })).toEqual(DEFAULTS);
    expect(loadConfig().port).toBe(1234);
  });

  it.each(names)('%s: empty or whitespace-only is unset', (name) => {
    expect(loadConfig({ [name]: '' })).toEqual(DEFAULTS);
    expect(loadConfig({ [name]: ' \t ' })).toEqual(DEFAULTS);
  });

  it('keeps the blank rule in every module\'s variables', () => {
    expect(loadConfig({ CHAIN_READ_TIMEOUT_MS: '  ' }).chains).toEqual(DEFAULTS.chains);
    expect(loadConfig({ TRUST_HTTP_TIMEOUT_MS: '  ' }).trust).toEqual(DEFAULTS.trust);
    expect(loadConfig({ ZKP_REQUEST_TTL_SECONDS: '  ' }).zkp).toEqual(DEFAULTS.zkp);
  });
});

describe('loadConfig spellings', () => {
  it('trims values', () => {
    const c = loadConfig({ PORT: ' 8080 ', HOST: ' 127.0.0.1 ', PUBLIC_BASE_URL: ' https://svc.example/ ', CHAIN_MULTICALL: ' off ' });
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', publicBaseUrl: 'https://svc.example', chains: { multicall: 'off' } });
  });

  it('takes booleans as 1/true/yes/on and 0/false/no/off, any case', () => {
    for (const yes of ['1', 'true', 'YES', 'On']) expect(loadConfig({ DEMO_ISSUER: yes, DOCS_ENABLED: yes }).demoIssuer).toBe(true);
    for (const no of ['0', 'FALSE', 'no', 'Off']) expect(loadConfig({ DEMO_ISSUER: no, DOCS_ENABLED: no }).docs).toBe(false);
    expect(loadConfig({ REQUIRE_HOLDER_BINDING: 'yes' }).trust.requireHolderBinding).toBe(true);
    expect(loadConfig({}).console).toBe(true);
    expect(loadConfig({ CONSOLE: 'false' }).console).toBe(false);
  });

  it('keeps ZKP_ALLOW_PLAIN_RESPONSES to true/false/1/0', () => {
    expect(loadConfig({ ZKP_ALLOW_PLAIN_RESPONSES: 'TRUE' }).zkp.allowPlainMessages).toBe(true);
    expect(loadConfig({ ZKP_ALLOW_PLAIN_RESPONSES: '1' }).zkp.allowPlainMessages).toBe(true);
    expect(loadConfig({ ZKP_ALLOW_PLAIN_RESPONSES: '0' }).zkp.allowPlainMessages).toBe(false);
  });

  it('takes words in any case, read in their declared spelling', () => {
    const c = loadConfig({ LOG_LEVEL: 'DEBUG', SQLITE_SYNCHRONOUS: 'full', CREDENTIAL_VERIFICATION: 'Off', WORKERS: 'AUTO' });
    expect(c).toMatchObject({ logLevel: 'debug', database: { synchronous: 'FULL' }, trust: { mode: 'off' } });
    expect(c.workers).toBe(Math.min(os.availableParallelism(), 64));
  });

  it('reads the databases', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite://:memory:' }).database).toEqual({ kind: 'sqlite', file: ':memory:', synchronous: 'NORMAL' });
    expect(loadConfig({ DATABASE_URL: 'sqlite:///tmp/x.db' }).database).toMatchObject({ file: '/tmp/x.db' });
    expect(loadConfig({ DATA_DIR: ' /tmp/scs ' }).database).toMatchObject({ file: '/tmp/scs/scenarios.db' });
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@db.example/x', DATABASE_SCHEMA: 'tenant_1', DATABASE_POOL_SIZE: '3' }).database)
      .toEqual({ kind: 'postgres', url: 'postgresql://u@db.example/x', schema: 'tenant_1', poolSize: 3, statementTimeoutMs: 2000, connectionTimeoutMs: 2000 });
  });

  it('reads callers and webhooks', () => {
    const c = loadConfig({
      API_TOKENS: 'operator-token-0123456789, tenant-token-0123456789:projA+projB',
      AUTH_JWKS_URL: 'https://id.example/jwks', AUTH_JWT_ISSUER: 'https://id.example', AUTH_JWT_AUDIENCE: 'svc',
      WEBHOOK_URL: 'https://hooks.example/in/', WEBHOOK_SECRET: `whsec_${'A'.repeat(32)}`, WEBHOOK_MAX_ATTEMPTS: '3',
    });
    expect(c.apiTokens).toEqual([
      { token: 'operator-token-0123456789', projects: '*' },
      { token: 'tenant-token-0123456789', projects: ['projA', 'projB'] },
    ]);
    expect(c.jwt).toEqual({ jwksUrl: 'https://id.example/jwks', issuer: 'https://id.example', audience: 'svc', projectsClaim: 'projects' });
    expect(c.webhook).toEqual({
      url: 'https://hooks.example/in', secret: `whsec_${'A'.repeat(32)}`, allowPrivateTargets: false,
      maxAttempts: 3, retryBaseMs: 1000, timeoutMs: 5000, pollMs: 1000,
    });
    expect(loadConfig({ WEBHOOK_SECRET: `whsec_${'A'.repeat(32)}`, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }).webhook?.allowPrivateTargets).toBe(true);
    expect(loadConfig({ SCENARIO_APPROVAL_PROJECTS: ' projA, projB ,' }).approvalProjects).toEqual(['projA', 'projB']);
    expect(loadConfig({ SCENARIO_APPROVAL_PROJECTS: '*' }).approvalProjects).toBe('*');
  });
});
