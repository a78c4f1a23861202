import { projectSecret, type WebhookConfig } from '../domain/webhooks.js';
import type { Access } from './access.js';
import { ForbiddenProject } from './errors.js';

/** Undefined where webhooks are off. */
export function webhookSecretOf(access: Access, projectId: string, webhook: WebhookConfig | undefined): string | undefined {
  if (!access.sees(projectId)) throw new ForbiddenProject(`This token does not hold project ${projectId}`);
  return webhook && projectSecret(webhook.secret, projectId);
}
