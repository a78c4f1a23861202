import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { heldTypes, type HeldType } from '../domain/attribute-tree.js';
import type { CredentialTypes } from '../domain/credential-types.js';
import type { QueryPolicies } from '../engine/policy.js';
import { StringEnum } from '../schemas/common.js';
import { Operators } from '../schemas/scenario.js';
import { AUTHENTICATED, answered, problemResponses } from './responses.js';
import { sendJson } from './revision-responses.js';

const ATTRIBUTE_FIELDS = {
  name: Type.String({ description: 'The term, as the JSON-LD context names it.' }),
  path: Type.String({ description: 'What a rule\'s `attribute` says to read it: dot-separated from the credential subject.', examples: ['personalData.age'] }),
  datatype: Type.String({
    description: 'The context\'s `@type` for it (`xsd:integer`, `xsd:string` …); `object`: it has attributes of its own; ' +
      '`open`: its context is given by reference, so any attribute below it is accepted unchecked; `unknown`: none declared.',
  }),
  valueKind: StringEnum(['string', 'number', 'boolean', 'date', 'any'], {
    description: 'The kind of value a rule on it compares with.',
  }),
  operators: Type.Array(StringEnum(Operators), {
    description: 'The operators a rule on it may use (none for an object). $sd and $noop are left out: they are per scenario type.',
  }),
};

const Attribute = Type.Object({
  ...ATTRIBUTE_FIELDS,
  attributes: Type.Optional(Type.Array(Type.Unknown(), { description: 'An object\'s attributes, each of this same shape.' })),
});

const HeldTypes = Type.Object({
  items: Type.Array(Type.Object({
    type: Type.String({ description: 'A rule\'s `query.type`.', examples: ['IDInformation'] }),
    open: Type.Boolean({ description: 'Its context is given by reference only: a rule may name any attribute, unchecked.' }),
    attributes: Type.Array(Attribute),
  })),
  scenarioTypes: Type.Array(Type.Object({
    type: Type.String({ description: 'A scenario\'s `type`.', examples: ['OnChainZKP'] }),
    refusedOperators: Type.Array(StringEnum(Operators), {
      description: 'Operators create and PATCH refuse in this type\'s rules whatever the attribute\'s datatype allows ' +
        '(OnChainZKP: $lte and $gte, unless the rule names a V3 circuit). An editor offers an attribute\'s operators less these.',
    }),
  }), { description: 'Each scenario type, in the registry\'s order.' }),
});

/**
 * The credential types the service holds the JSON-LD context of, with each attribute's datatype and operators: what a
 * rule editor offers, and what create and PATCH check a rule's `type` and `attribute` against.
 */
export const credentialTypeRoutes: FastifyPluginAsyncTypebox<{
  credentialTypes: () => CredentialTypes; policies: QueryPolicies;
}> = async (app, { credentialTypes, policies }) => {
  let text: string | undefined;
  app.get('/compliance/credential-types', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'listCredentialTypes',
      summary: 'List the credential types whose attributes create and PATCH check',
      description: 'Each credential type the service holds the JSON-LD context of (IDInformation is bundled; more come with ' +
        '`JSONLD_DOCUMENTS_FILE`), with its attribute tree: each attribute\'s path, declared datatype, the operators that ' +
        'datatype allows and the kind of value they compare with; and for each scenario type the operators it refuses ' +
        'whatever the datatype (`scenarioTypes`). A rule naming a type not listed here is accepted ' +
        'unchecked unless its name is near a listed one. The same for every caller: the list changes only with a restart.',
      tags: ['scenarios'], security: [{ bearerAuth: ['scenarios:read'] }],
      response: {
        200: answered(HeldTypes, 'The held credential types, by name.'),
        ...problemResponses([...AUTHENTICATED]),
      },
    },
  }, async (_request, reply) => {
    text ??= JSON.stringify({
      items: heldTypes(credentialTypes()) satisfies HeldType[],
      scenarioTypes: Object.entries(policies).map(([type, policy]) => ({ type, refusedOperators: Object.keys(policy?.refusedOperators ?? {}) })),
    });
    return sendJson(reply, text);
  });
};
