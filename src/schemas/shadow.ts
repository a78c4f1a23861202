import { Type } from '@sinclair/typebox';
import { IdOf, StringEnum, refOf } from './common.js';
import { RuleStatus } from './execution.js';

const Side = (which: string) => Type.Union([refOf(RuleStatus), Type.Null()], {
  description: `The rule's status in the ${which} revision; null: the rule is not in it.`,
});

/** A shadow run's counts: no credential, no address, only statuses and execution ids. */
export const ShadowRun = Type.Object(
  {
    scenarioId: IdOf('The scenario\'s id.', 'adult-kyc'),
    revision: Type.Integer({ minimum: 1, description: 'The proposed revision in shadow.' }),
    state: StringEnum(['active', 'stopped'], {
      description: 'active: every execute of the scenario (on every instance) also evaluates this revision. stopped: by ' +
        '`DELETE …/shadow`, or by the proposal\'s approval or rejection; the counts stay.',
    }),
    startedAt: Type.String({ format: 'date-time', description: 'When the shadow was first started (a start after a stop resumes it).' }),
    stoppedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When it stopped; absent while active.' })),
    startedBy: Type.Union([Type.String(), Type.Null()], {
      description: 'Who started it: `token:` and a 12-hex fingerprint for a static token, `jwt:<iss>:<sub>` for a JWT.',
    }),
    compared: Type.Integer({ minimum: 0, description: 'Executions whose inputs the revision was evaluated with.' }),
    flipped: Type.Integer({
      minimum: 0,
      description: 'Of those, executions whose verdict the revision would change (passed, failed, pending). Not counted here: undecided.',
    }),
    undecided: Type.Integer({
      minimum: 0,
      description: 'Of those, executions whose verdict under the revision could not be decided, so neither the same nor flipped: the ' +
        'revision\'s verdict was `error` where the live one was not.',
    }),
    skipped: Type.Integer({
      minimum: 0,
      description: 'Executions not compared: the instance\'s shadow queue was full (SHADOW_QUEUE_LIMIT) or it was shutting down.',
    }),
    byRule: Type.Array(Type.Object({
      ruleId: Type.String({ description: 'The query configuration id: rules are matched by id.' }),
      compared: Type.Integer({ minimum: 0, description: 'Comparisons in which the rule is in either revision.' }),
      differs: Type.Integer({ minimum: 0, description: 'Of those, where its status differs (a rule in one revision only always differs).' }),
      changes: Type.Array(Type.Object({
        live: Side('live'),
        shadow: Side('shadowed'),
        count: Type.Integer({ minimum: 1 }),
      }, { additionalProperties: false }), { description: 'How the status differs: each live → shadow pair and how often.' }),
    }, { additionalProperties: false }), { description: 'Per rule, by id.' }),
    flippedExecutions: Type.Array(Type.String({ format: 'uuid' }), {
      description: 'A page of the ids of the executions whose verdict would flip, oldest first: GET /compliance/executions/{id} reads each.',
    }),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass it as `cursor` for the next page of `flippedExecutions`; null on the last.' }),
  },
  {
    $id: 'ShadowRun',
    additionalProperties: false,
    description: 'A proposed revision evaluated beside the live one on every execute, and what it would have changed.',
  },
);
