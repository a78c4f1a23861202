import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { isRecord } from '../schemas/json.js';

declare module 'fastify' {
  interface FastifySchema {
    /** Named examples of the request body (OpenAPI Example Objects), shown with each of its media types. */
    'x-request-examples'?: Record<string, { summary?: string; description?: string; value: unknown }>;
  }
}

/** The document is walked as plain JSON. */
const records = (value: unknown): Record<string, unknown>[] => (isRecord(value) ? Object.values(value).filter(isRecord) : []);

/** Sent with every response (src/app.ts): the request's id, the caller's own when it sent a sane one. */
const REQUEST_ID_HEADER = {
  description: 'The id of this request: the x-request-id the caller sent when it is 1 to 128 of [A-Za-z0-9._:-], else ' +
    'a new UUID. Quote it when reporting a problem: the log lines of the request carry it.',
  schema: { type: 'string' },
};

/** For problem examples' `instance`. */
const examplePath = (template: string) =>
  template.replace('{scenarioId}', 'adult-kyc').replace(/\{[A-Za-z]*[iI]d\}/g, '0b5e2c1e-7d0c-4a5e-9a55-3f1f0c2d9e41');

/** What a route schema cannot say: x-request-id on every response, each problem example's `instance`. */
function addResponseDetails<T extends { paths?: object; components?: object }>(doc: T): T {
  if (isRecord(doc.components)) doc.components.headers = { RequestId: REQUEST_ID_HEADER };
  const paths: Record<string, unknown> = isRecord(doc.paths) ? doc.paths : {};
  for (const [template, item] of Object.entries(paths)) {
    for (const operation of records(item)) {
      for (const response of records(operation.responses)) {
        response.headers = { ...(isRecord(response.headers) ? response.headers : {}), 'x-request-id': { $ref: '#/components/headers/RequestId' } };
        const problem = isRecord(response.content) ? response.content['application/problem+json'] : undefined;
        for (const example of records(isRecord(problem) ? problem.examples : undefined)) {
          if (isRecord(example.value)) example.value = { ...example.value, instance: examplePath(template) };
        }
      }
    }
  }
  return doc;
}

/** `x-request-examples` onto the body's media types: a $ref keeps nothing beside it. */
function placeRequestExamples<T extends { paths?: object }>(doc: T): T {
  for (const item of records(doc.paths)) {
    for (const operation of records(item)) {
      const examples = operation['x-request-examples'];
      if (examples === undefined) continue;
      for (const media of records(isRecord(operation.requestBody) ? operation.requestBody.content : undefined)) media.examples = examples;
      delete operation['x-request-examples'];
    }
  }
  return doc;
}

/** Hash of the inline style Swagger UI's page carries. */
const DOCS_INLINE_STYLE = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';

/** A CSP header without its upgrade-insecure-requests directive. */
const withoutUpgrade = (csp: string): string =>
  csp.split(';').map((d) => d.trim()).filter((d) => d !== '' && d !== 'upgrade-insecure-requests').join('; ');

/** Built always: openapi.yaml is written from it. */

async function docs(app: FastifyInstance, { ui }: { ui: boolean }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Scenario Compliance Service',
        version: '0.1.0',
        description:
          'Decides whether a blockchain address, holding a set of verifiable credentials, passes a compliance scenario.\n\n' +
          'A first call: create a scenario (POST /compliance/scenarios, see its example), then execute it ' +
          '(POST /compliance/scenarios/execute) with the address and the credentials of its holder; the answer has one ' +
          'result per rule of the scenario, and the address passes when every result is `valid`.\n\n' +
          'Every call but the health checks, /metrics and the OffChainZKP wallet callback needs ' +
          '`Authorization: Bearer <token>`. Errors are RFC 9457 problem details (application/problem+json): branch on ' +
          '`code`, show `detail` and, for a 400, each `errors[i].message` next to the field `errors[i].field` names. ' +
          'Each response below says when it happens and what to do. The README explains the choices this service ' +
          'makes where the platform\'s API contract leaves things open.',
      },
      tags: [
        { name: 'execute', description: 'Run a scenario against an address and the credentials of its holder' },
        { name: 'scenarios', description: 'Create, read, list, update and delete scenarios' },
        { name: 'executions', description: 'The execution audit log' },
        { name: 'webhooks', description: 'Execution webhooks: a project\'s signing secret' },
        { name: 'health', description: 'Liveness and readiness' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A static token from API_TOKENS (every scope), or a JWT verified against AUTH_JWKS_URL whose `scope` claim ' +
              'grants scenarios:read, scenarios:write, scenarios:execute and/or scenarios:approve (approve or reject a ' +
              'proposed revision). A missing scope answers 403.',
          },
        },
      },
    },
    transformObject: (documents) => ('openapiObject' in documents
      ? addResponseDetails(placeRequestExamples(documents.openapiObject))
      : documents.swaggerObject),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  if (ui) {
    // upgrade-insecure-requests blanks the page over plain http, so kept only over https. Per route: it runs after
    // the UI plugin's onSend, which sets the header.
    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/docs')) return;
      const own = route.onSend === undefined ? [] : [route.onSend].flat();
      route.onSend = [...own, async (request, reply) => {
        const csp = reply.getHeader('content-security-policy');
        if (typeof csp === 'string' && request.protocol !== 'https') reply.header('content-security-policy', withoutUpgrade(csp));
      }];
    });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true },
      staticCSP: true,
      // Swagger UI's one inline style, by its hash (else the browser reports a CSP violation on every load).
      transformStaticCSP: (header) => header.replace("style-src 'self' https:", `style-src 'self' https: '${DOCS_INLINE_STYLE}'`),
    });
  }
}

export const openApiDocs = fp(docs, { name: 'docs', fastify: '5.x' });
