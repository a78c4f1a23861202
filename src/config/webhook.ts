import { Type, type Static } from '@sinclair/typebox';
import type { WebhookConfig } from '../domain/webhooks.js';
import { ConfigError } from './errors.js';
import { flag, httpUrl, integer, text } from './variables.js';

export const webhookEnv = Type.Object({
  WEBHOOK_URL: Type.Optional(text({
    expect: 'an http(s) URL',
    docDefault: 'unset (only scenarios with a `webhookUrl` get webhooks)',
    description: 'Where the end of every execution is POSTed (Standard Webhooks), unless its scenario names its own `webhookUrl`.',
  })),
  WEBHOOK_SECRET: Type.Optional(text({
    expect: 'a Standard Webhooks secret: whsec_ and the base64 of 24 to 64 random bytes',
    docDefault: 'unset (no webhooks); required with `WEBHOOK_URL` and by scenarios with a `webhookUrl`',
    description: 'Signs every delivery (`webhook-signature`, HMAC-SHA256); receivers verify it with the same secret.',
  })),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag({
    default: false,
    description: 'Lets a scenario\'s `webhookUrl` name a loopback, private or link-local address (or a host resolving to one). ' +
      'Off: refused when the scenario is written (400) and at delivery. For development and tests; `WEBHOOK_URL` is always trusted.',
  }),
  WEBHOOK_MAX_ATTEMPTS: integer(1, 100, { default: 8, description: 'Attempts before a delivery is marked failed (a replay starts it again).' }),
  WEBHOOK_RETRY_BASE_MS: integer(10, 3_600_000, {
    default: 1000,
    description: 'Backoff: the n-th retry waits base × 2^(n−1), at most an hour.',
  }),
  WEBHOOK_TIMEOUT_MS: integer(100, 120_000, { default: 5000, description: 'Time allowed for one delivery, from the connection to the end of the answer\'s body (the socket is closed then).' }),
  WEBHOOK_POLL_MS: integer(10, 60_000, { default: 1000, description: 'How often the outbox is polled.' }),
});

export type WebhookEnv = Static<typeof webhookEnv>;

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** WEBHOOK_URL needs WEBHOOK_SECRET. */
export function webhookConfig(env: WebhookEnv): WebhookConfig | undefined {
  const url = httpUrl('WEBHOOK_URL', env.WEBHOOK_URL);
  const secret = env.WEBHOOK_SECRET;
  if (secret === undefined) {
    if (url !== undefined) throw new ConfigError('WEBHOOK_SECRET (whsec_ and base64) is required when WEBHOOK_URL is set');
    return undefined;
  }
  const key = SECRET.exec(secret)?.[1];
  const bytes = key === undefined ? 0 : Buffer.from(key, 'base64').length;
  if (bytes < 24 || bytes > 64) throw new ConfigError('WEBHOOK_SECRET must be whsec_ and the base64 of 24 to 64 random bytes');
  return {
    ...(url !== undefined && { url }),
    secret,
    allowPrivateTargets: env.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    maxAttempts: env.WEBHOOK_MAX_ATTEMPTS,
    retryBaseMs: env.WEBHOOK_RETRY_BASE_MS,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    pollMs: env.WEBHOOK_POLL_MS,
  };
}
