import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RevisionSource } from '../services/revision-drafts.js';
import type { ScenarioRow } from '../services/scenarios.js';
import { refOf } from '../schemas/common.js';
import { exampleScenario } from '../schemas/example-scenario.js';
import { Scenario, ScenarioRecord } from '../schemas/scenario.js';
import { Page } from './cursor.js';
import { AUTHENTICATED, EXAMPLES, also, answered, problemResponses } from './responses.js';

/** Texts several scenario routes share. */
const NOT_FOUND = 'No scenario with this id in the token\'s projects (code SCS_SCENARIO_NOT_FOUND): another project\'s ' +
  'scenarios are never revealed. Check the id (GET /compliance/scenarios lists yours).';
const AMBIGUOUS = 'SCS_SCENARIO_AMBIGUOUS: several of the token\'s projects have a scenario with this id; add ?projectId= ' +
  'to name one.';
const IN_PROGRESS = 'SCS_IDEMPOTENCY_IN_PROGRESS: a request with this Idempotency-Key is still running; send again after Retry-After.';
const RULES = 'The rules are checked too, each error under body.input: an operator and its value must fit, query ' +
  'configuration ids must be unique, a deployment status may not move backwards, and a ChallengeQuery rule\'s type and ' +
  'attribute must be ones the held JSON-LD contexts define when its type is (or is near) a held one: the message names ' +
  'the nearest ("did you mean personalData.age?").';
const ETAG = 'The ETag header is the scenario\'s version: send it as If-Match on PATCH to refuse a lost update.';

/** PATCH's If-Match header: the quoted form, as the ETag header gives it. */
export const IfMatch = Type.Optional(Type.String({
  maxLength: 1024,
  description: 'The ETag of your last read or write, exactly as the ETag header gave it, quotes included: ' +
    '`If-Match: "12.3"` (a strong tag; a W/ weak tag never matches), a comma-separated list of them, or `*`. ' +
    'The PATCH applies only while the scenario is still at that version; else 412.',
  examples: ['"12.3"'],
}));

const [kyc, age] = exampleScenario.queryConfigurations;
if (kyc === undefined || age === undefined) throw new Error('the example scenario has two rules, q-kyc and q-age');
const citizenship = { id: 'q-citizenship', query: { type: 'IDInformation', requestId: 3, attribute: 'personalData.citizenship', value: ['FRA', 'DEU'], operator: '$in' } };

/** PATCH request examples (named, shown in /docs): merge-patch semantics, arrays replaced whole. */
export const updateRequestExamples = {
  addRule: {
    summary: 'Add a rule (arrays are replaced whole)',
    description: 'queryConfigurations is replaced whole: to add q-citizenship, send the rules you keep (q-kyc, q-age) ' +
      'with it. Sending q-citizenship alone would leave it the only rule.',
    value: { input: { queryConfigurations: [kyc, age, citizenship] } },
  },
  raiseAge: {
    summary: 'Change one rule\'s value',
    description: 'The age rule raised to 21; q-kyc is sent again, unchanged, or it would be dropped.',
    value: { input: { queryConfigurations: [kyc, { ...age, query: { ...age.query, value: 21 } }] } },
  },
  fields: {
    summary: 'Change a field, clear another',
    description: 'Absent fields stay as they are; null clears an optional field (null on a required one is a 400).',
    value: { input: { description: 'Adults with a green KYC review', message: null } },
  },
};

/** The examples of a route that looks a scenario up by id. */
const LOOKUP = { 400: EXAMPLES.invalidQuery, 404: EXAMPLES.scenarioNotFound, 409: EXAMPLES.ambiguous };

/** What each scenario route answers, and when (scenarios.ts). */
export const scenarioResponses = {
  create: {
    201: answered(refOf(ScenarioRecord), 'Created: the stored scenario, with its id (generated when the body has ' +
      `none) and revision 1. The Location header is its URL. ${ETAG}`, ['ETag', 'Location', 'Idempotent-Replayed']),
    ...problemResponses([...AUTHENTICATED, 409, 413, 415, 422], {
      400: also(400, RULES),
      403: also(403, 'SCS_FORBIDDEN_PROJECT: input.projectId is not one of the token\'s projects (only an operator ' +
        'token may create a scenario without one); set it to one of your projects.'),
      409: 'SCS_SCENARIO_EXISTS: the scenario\'s project has a scenario with this id already; choose another id, ' +
        `or PATCH that one. ${IN_PROGRESS}`,
    }, { retryAfter: [409], examples: { 400: EXAMPLES.invalidRules, 409: EXAMPLES.scenarioExists } }),
  },
  list: {
    200: answered(Page(refOf(ScenarioRecord)), 'A page of the scenarios of the token\'s projects, in creation order; ' +
      '`nextCursor` is null on the last page.'),
    ...problemResponses(AUTHENTICATED, { 400: also(400, 'A cursor is valid only as a nextCursor this service gave.') }, { examples: { 400: EXAMPLES.invalidLimit } }),
  },
  read: {
    200: answered(refOf(ScenarioRecord), `The scenario. ${ETAG}`, ['ETag']),
    ...problemResponses([...AUTHENTICATED, 404, 409], { 404: NOT_FOUND, 409: AMBIGUOUS }, { examples: LOOKUP }),
  },
  remove: {
    204: answered(Type.Null({ description: 'Deleted' }), 'Deleted. Its executions stay in the audit log until ' +
      'EXECUTION_RETENTION_DAYS have passed.'),
    ...problemResponses([...AUTHENTICATED, 404, 409, 415], {
      404: NOT_FOUND, 409: `${AMBIGUOUS} SCS_APPROVAL_REQUIRED: the scenario's project is in SCENARIO_APPROVAL_PROJECTS, ` +
        'where a scenario is not deleted directly (its id would be free for a new scenario no one reviewed).',
      415: 'A DELETE takes no body: send it without one.',
    }, { examples: LOOKUP }),
  },
  update: {
    200: answered(
      Type.Object({ input: refOf(Scenario) }, { additionalProperties: false, description: 'The full updated scenario' }),
      `Updated: the whole scenario after the patch, at its next revision. ${ETAG}`,
      ['ETag'],
    ),
    202: answered(
      Type.Object({ input: refOf(Scenario) }, { additionalProperties: false, description: 'The whole scenario as the proposal would make it' }),
      'Proposed, not live: the scenario\'s project requires approval (SCENARIO_APPROVAL_PROJECTS). `input` is the whole ' +
      'scenario the proposal would make; the scenario and what execute runs are unchanged until a token with the scope ' +
      'scenarios:approve, not the author\'s, approves it (`POST /compliance/scenarios/{id}/revisions/{n}/approve`). `Location` ' +
      'is the proposed revision (GET it for its number, `state` and `content`). No ETag: ' +
      'the live scenario\'s did not change.',
      ['Location'],
    ),
    ...problemResponses([...AUTHENTICATED, 404, 409, 412, 413, 415], {
      400: also(400, `The patch is checked, then the scenario it makes: null on a required field is named here. ${RULES}`),
      403: also(403, 'SCS_FORBIDDEN_PROJECT: the patch moves the scenario to a project the token does not hold ' +
        '(a move needs a token holding both projects; only an operator token may remove the projectId).'),
      404: NOT_FOUND,
      409: `${AMBIGUOUS} SCS_CONFLICT: the target project has a scenario with this id already, or the scenario ` +
        'kept changing under concurrent writes; read it and send the PATCH again.',
      412: 'If-Match does not match the scenario\'s current ETag: it changed since you read it (code ' +
        'SCS_PRECONDITION_FAILED). Read it again (GET), apply your change to what you read, and send it with the new ETag.',
      415: 'Send the patch as `Content-Type: application/json` or `application/merge-patch+json`.',
    }, { examples: { ...LOOKUP, 400: EXAMPLES.invalidPatch } }),
  },
};

export const record = (row: ScenarioRow) => ({
  id: row.id, input: row.input, createdAt: row.createdAt, updatedAt: row.updatedAt, revision: row.revision,
});

/** A revision keeps the very text the scenario's GET answers: its response schema, serialised by its compiler. */
export const revisionSource = (request: FastifyRequest, reply: FastifyReply): RevisionSource => ({
  author: request.principal?.subject ?? null,
  serialize: (row) => reply.serializeInput(record(row), scenarioResponses.read[200]),
});
