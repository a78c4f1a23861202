import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';

const Me = Type.Object({
  subject: Type.String({
    description: 'Who the token is, as revisions name their `author` and `decidedBy`: `token:` and a 12-hex fingerprint of a ' +
      'static token (never the token), `jwt:<iss>:<sub>` for a JWT.',
    examples: ['token:3f9a0c1b2d4e'],
  }),
  named: Type.Boolean({
    description: 'Whether the subject names one caller: false for a JWT without `sub` (every such token of its issuer shares ' +
      'one subject), which the API refuses as an approver (403 SCS_APPROVER_UNNAMED).',
  }),
  scopes: Type.Array(Type.String(), { description: 'The scopes the token carries (a static token: all of them), sorted.' }),
  projects: Type.Union([Type.Literal('*'), Type.Array(Type.String())], {
    description: '`*`: an operator\'s token, every project; else the projects it holds, sorted.',
  }),
}, { additionalProperties: false });

/**
 * Who the caller is, as the service sees it: what a client needs to know before it offers an action the API would
 * refuse (approve a revision it proposed, or without the scope). Nothing of the token itself, nor a JWT's other claims.
 */
export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/compliance/me', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'getCaller',
      summary: 'Who this token is: its subject, whether it names one caller, its scopes and projects',
      description: 'The subject a revision\'s `author` or `decidedBy` would name for this token, its scopes and its projects. A ' +
        'client (the console) compares the subject with a proposal\'s author to leave out the approve action the API refuses ' +
        'its author (403 SCS_SELF_APPROVAL), `named` to leave it out for a JWT without `sub` (403 SCS_APPROVER_UNNAMED), and the scopes to leave out what the token may not do. Scope `scenarios:read`, as ' +
        'every page that would ask it needs.',
      tags: ['scenarios'], security: [{ bearerAuth: ['scenarios:read'] }],
      response: {
        200: answered(Me, 'The caller: subject, named, scopes and projects.'),
        ...problemResponses([...AUTHENTICATED]),
      },
    },
  }, async (request) => {
    const principal = request.principal;
    // The auth hook sets it on every route of this context, or answers 401 before.
    if (!principal) throw new Error('GET /compliance/me reached without a principal');
    return {
      subject: principal.subject,
      named: principal.named,
      scopes: [...principal.scopes].sort(),
      projects: principal.projects === '*' ? '*' as const : [...principal.projects].sort(),
    };
  });
};
