/** Execution webhooks (WEBHOOK_*): where completed and failed executions are POSTed, and how deliveries retry. */
import { Type, type Static } from '@sinclair/typebox';
import type { WebhookConfig } from '../domain/webhooks.js';
import { ConfigError } from './errors.js';
import { httpUrl, integer, text } from './variables.js';

export const webhookEnv = Type.Object({
  WEBHOOK_URL: Type.Optional(text({
    expect: 'an http(s) URL',
    docDefault: 'unset (no webhooks)',
    description: 'Where execution-completed/failed events are POSTed.',
  })),
  WEBHOOK_SECRET: Type.Optional(text({
    expect: 'at least 16 characters',
    docDefault: 'required with `WEBHOOK_URL`',
    description: 'HMAC-SHA256 key of the `X-Webhook-Signature` header (16+ characters).',
  })),
  WEBHOOK_MAX_ATTEMPTS: integer(1, 100, { default: 8, description: 'Attempts before a delivery is marked failed.' }),
  WEBHOOK_RETRY_BASE_MS: integer(10, 3_600_000, {
    default: 1000,
    description: 'Backoff: the n-th retry waits base × 2^(n−1), at most an hour.',
  }),
  WEBHOOK_TIMEOUT_MS: integer(100, 120_000, { default: 5000, description: 'Time allowed for the receiver to answer.' }),
  WEBHOOK_POLL_MS: integer(10, 60_000, { default: 1000, description: 'How often the outbox is polled.' }),
});

export type WebhookEnv = Static<typeof webhookEnv>;

/** The webhook settings of checked webhook variables, when WEBHOOK_URL is set; its secret is then required. */
export function webhookConfig(env: WebhookEnv): WebhookConfig | undefined {
  const url = httpUrl('WEBHOOK_URL', env.WEBHOOK_URL);
  if (!url) return undefined;
  const secret = env.WEBHOOK_SECRET ?? '';
  if (secret.length < 16) throw new ConfigError('WEBHOOK_SECRET (at least 16 characters) is required when WEBHOOK_URL is set');
  return {
    url,
    secret,
    maxAttempts: env.WEBHOOK_MAX_ATTEMPTS,
    retryBaseMs: env.WEBHOOK_RETRY_BASE_MS,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    pollMs: env.WEBHOOK_POLL_MS,
  };
}
