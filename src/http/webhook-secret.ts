import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhookConfig } from '../domain/webhooks.js';
import { webhookSecretOf } from '../services/webhook-secrets.js';
import { WebhooksDisabled } from './errors.js';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';
import { accessOf } from './tenancy.js';

/** A project's webhook signing secret, for its tenant's receivers (docs/webhooks.md). */
export const webhookSecretRoute: FastifyPluginAsyncTypebox<{ webhook: WebhookConfig | undefined }> = async (app, { webhook }) => {
  app.get('/compliance/webhooks/secret', {
    config: { scope: 'scenarios:write' },
    schema: {
      operationId: 'getProjectWebhookSecret',
      summary: 'Read a project\'s webhook signing secret',
      description: 'The Standard Webhooks secret (`whsec_…`) that signs the deliveries to the `webhookUrl` of the ' +
        'project\'s scenarios: give it to your receiver. Each project has its own, derived from the service\'s ' +
        'WEBHOOK_SECRET (it changes when the operator rotates that); deliveries to the operator\'s WEBHOOK_URL are ' +
        'signed with WEBHOOK_SECRET itself. Same scope as writing a scenario, and only for a project the token holds.',
      tags: ['webhooks'], security: [{ bearerAuth: ['scenarios:write'] }],
      querystring: Type.Object({
        projectId: Type.String({ minLength: 1, maxLength: 128, description: 'The project (a scenario\'s `projectId`).' }),
      }, { additionalProperties: false }),
      response: {
        200: answered(Type.Object({
          projectId: Type.String(),
          secret: Type.String({ description: 'whsec_ and base64: verify `webhook-signature` with it (any Standard Webhooks library).' }),
        }, { additionalProperties: false }), 'The project\'s signing secret, for the receivers of its scenarios\' webhookUrl.'),
        ...problemResponses([...AUTHENTICATED, 404], {
          403: 'The token does not hold this project (code SCS_FORBIDDEN_PROJECT).',
          404: 'Webhooks are not enabled on this service: its operator has not set WEBHOOK_SECRET (code SCS_WEBHOOKS_DISABLED).',
        }),
      },
    },
  }, async (request) => {
    const { projectId } = request.query;
    // accessOf refuses a projectId no database could store.
    const secret = webhookSecretOf(accessOf(request), projectId, webhook);
    if (secret === undefined) throw new WebhooksDisabled();
    return { projectId, secret };
  });
};
