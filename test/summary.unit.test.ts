/**
 * The start-up line (src/config/summary.ts) says whether webhooks and attestations are on, and which, with the
 * variable that turns each on when it is off, never a secret or a webhook URL's path, query or credentials.
 * test/startup.test.ts reads the same line from the real process.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startupSummary } from '../src/config/summary.js';
import { DEMO_ISSUER_DID } from '../src/trust/demo-did.js';

const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const EIP712_KEY = `0x${'11'.repeat(32)}`;
const summary = (env: Record<string, string>) => startupSummary(loadConfig(env), { address: '127.0.0.1', family: 'IPv4', port: 3000 });

describe('the start-up line, webhooks and attestations', () => {
  it('says both are off by default, naming the variable that turns each on', () => {
    const { msg, fields } = summary({});
    expect(msg).toContain('; webhooks off (set WEBHOOK_SECRET to enable); attestations off (set ATTESTATION_JWKS or ATTESTATION_EIP712_KEY to enable); ');
    expect(fields).toMatchObject({ webhooks: 'off', attestations: [] });
  });

  it('says webhooks are on for scenarios naming a webhookUrl when only WEBHOOK_SECRET is set', () => {
    const { msg, fields } = summary({ WEBHOOK_SECRET: SECRET });
    expect(msg).toContain('; webhooks on for scenarios with a webhookUrl (WEBHOOK_URL unset); ');
    expect(fields.webhooks).toBe('scenarios');
    expect(msg).not.toContain(SECRET);
  });

  it('names WEBHOOK_URL\'s origin only (not its credentials, path or query), and the attestation formats configured', () => {
    const { msg, fields } = summary({
      WEBHOOK_URL: 'https://hook-user:hook-password@hooks.example/in/sk-path-secret?token=query-secret',
      WEBHOOK_SECRET: SECRET,
      ATTESTATION_EIP712_KEY: EIP712_KEY,
    });
    expect(msg).toContain('; webhooks on (every execution to https://hooks.example, unless its scenario names another); attestations on: EIP-712; ');
    expect(fields).toMatchObject({ webhooks: 'all', attestations: ['eip712'] });
    for (const secret of ['hook-user', 'hook-password', 'sk-path-secret', 'query-secret', SECRET, EIP712_KEY]) expect(msg).not.toContain(secret);
  });

  it('says budgets are shared through Redis with REDIS_URL, never naming its URL or password, and nothing without it', () => {
    const shared = summary({ REDIS_URL: 'redis://user:redis-password@cache.internal:6379/2' });
    expect(shared.msg).toContain('; budgets shared across instances through Redis (REDIS_URL); ');
    expect(shared.fields.budgets).toBe('shared');
    for (const secret of ['redis-password', 'cache.internal']) expect(shared.msg).not.toContain(secret);
    const alone = summary({});
    expect(alone.msg).not.toContain('Redis');
    expect(alone.fields.budgets).toBe('per-process');
  });

  it('says when the keys are made for this run only (development: DEMO_ISSUER=1)', () => {
    const { msg, fields } = summary({ DEMO_ISSUER: '1' });
    expect(msg).toContain('; attestations on: JWS (key made for this run only), EIP-712 (key made for this run only); ');
    expect(fields.attestations).toEqual(['jws', 'eip712']);
  });
});

describe('the demo issuer trusted through TRUSTED_ISSUERS', () => {
  it('warns that its credentials answer error without DEMO_ISSUER=1, and says to set it', () => {
    const { warning } = summary({ TRUSTED_ISSUERS: `did:example:other,${DEMO_ISSUER_DID}` });
    expect(warning).toContain(`TRUSTED_ISSUERS lists the demo issuer (${DEMO_ISSUER_DID}) but DEMO_ISSUER is unset`);
    expect(warning).toContain('Set DEMO_ISSUER=1');
  });

  it('does not warn with DEMO_ISSUER=1, nor for other issuers', () => {
    expect(summary({ TRUSTED_ISSUERS: DEMO_ISSUER_DID, DEMO_ISSUER: '1' }).warning).toBeUndefined();
    expect(summary({ TRUSTED_ISSUERS: 'did:example:other' }).warning).toBeUndefined();
  });
});
