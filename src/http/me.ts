import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';

const Me = Type.Object({
  subject: Type.String({ description: 'Who the token is: `token:` and a fingerprint of a static token, `jwt:<iss>:<sub>` for a JWT (never the token).' }),
  scopes: Type.Array(Type.String(), { description: 'The scopes the token carries (scenarios:read, scenarios:write, scenarios:execute, scenarios:approve).' }),
  projects: Type.Union([Type.Literal('*'), Type.Array(Type.String())], {
    description: 'The projects the token holds: `*` for an operator\'s (every project, and the scenarios without one), else their ids, sorted.',
  }),
}, { additionalProperties: false });

/** What the token itself is allowed: for a client (the console) that offers only what the API would accept. */
export const meRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/compliance/me', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getMe',
      summary: 'Read what the token holds',
      description: 'The token\'s subject, scopes and projects, as the service reads them: e.g. the projects a scenario may be created in.',
      tags: ['scenarios'], security: [{ bearerAuth: ['scenarios:read'] }],
      response: { 200: answered(Me, 'The token\'s subject, scopes and projects.'), ...problemResponses(AUTHENTICATED) },
    },
  }, async (request) => {
    const principal = request.principal!;
    return {
      subject: principal.subject,
      scopes: [...principal.scopes].sort(),
      projects: principal.projects === '*' ? '*' as const : [...principal.projects].sort(),
    };
  });
};
