import { Type, type Static } from '@sinclair/typebox';
import { IdOf, refOf } from './common.js';
import { Credential } from './credential.js';
import { AddressInput, ExecutionResult, Verdict } from './execution.js';
import { Scenario } from './scenario.js';
import { RuleTrace } from './trace.js';

export const ScenarioReference = Type.Object(
  {
    id: IdOf('A stored scenario of the token\'s projects.', 'adult-kyc'),
    revision: Type.Optional(Type.Integer({
      minimum: 1,
      description: 'One of its kept revisions (GET /compliance/scenarios/{scenarioId}/revisions) to run, as its content ' +
        'says; absent: the live one. A revision not kept, or from when the scenario was in a project the token does ' +
        'not hold, is a 404 (SCS_REVISION_NOT_FOUND).',
    })),
  },
  { $id: 'ScenarioReference', additionalProperties: false, description: 'A stored scenario, by id.' },
);

/** A Scenario has no `id`: the key tells the two apart, and only the applicable schema names fields. */
const DryRunScenario = Type.Unsafe<Static<typeof ScenarioReference> | Scenario>({
  if: { type: 'object', required: ['id'] },
  then: refOf(ScenarioReference),
  else: refOf(Scenario),
  description: 'With `id`: a stored scenario (a ScenarioReference), found in the token\'s projects as execute finds it. ' +
    'Without: a whole Scenario, a draft, validated as POST /compliance/scenarios validates its `input` (400 naming ' +
    'body.scenario.<field>; 403 for a projectId the token does not hold) and stored nowhere; its results carry the ' +
    'scenarioId `draft`.',
});

export const DryRunRequest = Type.Object(
  {
    scenario: DryRunScenario,
    address: refOf(AddressInput),
    credentials: Type.Array(refOf(Credential), { maxItems: 100, description: 'As for execute (at most 100).' }),
  },
  { $id: 'DryRunRequest', additionalProperties: false, description: 'A scenario, stored or a draft, an address and the credentials its holder presents.' },
);
export type DryRunRequest = Static<typeof DryRunRequest>;

export const DryRunAnswer = Type.Object(
  {
    verdict: refOf(Verdict),
    revision: Type.Integer({ minimum: 0, description: 'The revision that ran; 0 for a draft.' }),
    results: Type.Array(refOf(ExecutionResult), {
      description: 'What execute would answer. Their executionId names no execution: nothing is recorded, GET ' +
        '/compliance/executions/{executionId} answers 404.',
    }),
    trace: Type.Array(refOf(RuleTrace), { description: 'One per rule, in the results\' order: how each was decided.' }),
  },
  { $id: 'DryRunAnswer', additionalProperties: false, description: 'A dry run\'s results and how each rule reached its own.' },
);
