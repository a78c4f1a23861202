import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ProjectQuery, refOf } from '../schemas/common.js';
import { ScenarioRevision as RevisionSchema } from '../schemas/scenario.js';
import type { ApprovalService } from '../services/approvals.js';
import { ApproverUnnamed } from '../services/errors.js';
import { AUTHENTICATED, EXAMPLES, answered, problemResponses } from './responses.js';
import { AMBIGUOUS, LOOKUP, NOT_FOUND, RevisionParams, revisionJson, sendJson } from './revision-responses.js';
import { revisionSource } from './scenario-responses.js';
import { accessOf } from './tenancy.js';

const NOT_PROPOSED = 'SCS_REVISION_NOT_PROPOSED: the revision is not a proposal awaiting a decision (approved, rejected, ' +
  'or written live). ';

const subjectOf = (request: FastifyRequest) => request.principal?.subject ?? '';

/** Four eyes: a proposed revision (a PATCH in a project that requires approval) approved by another, or rejected. */
export const approvalRoutes: FastifyPluginAsyncTypebox<{ approvals: ApprovalService }> = async (app, { approvals }) => {
  const tags = ['scenarios'];
  const security = [{ bearerAuth: ['scenarios:approve'] }];

  app.post('/compliance/scenarios/:scenarioId/revisions/:revision/approve', {
    config: { scope: 'scenarios:approve' },
    schema: {
      operationId: 'approveScenarioRevision',
      summary: 'Approve a proposed revision: it goes live',
      description: 'In one transaction: the scenario becomes the proposal (its `revision` the proposal\'s number, what ' +
        'execute runs from then on, on every instance) and the revision `approved`, with who approved it and when. Only ' +
        'while the revision the proposal was made from is still live; and never by the proposal\'s author.',
      tags, security,
      params: RevisionParams,
      querystring: ProjectQuery,
      response: {
        200: answered(refOf(RevisionSchema), 'The revision, approved: its `content` is what the scenario\'s GET answers now.'),
        ...problemResponses([...AUTHENTICATED, 404, 409], {
          403: 'SCS_SELF_APPROVAL: this token\'s subject proposed the revision; another must approve it. SCS_APPROVER_UNNAMED: ' +
            'a JWT without `sub` (all such tokens of an issuer share one subject) cannot approve. SCS_FORBIDDEN: the ' +
            'token lacks the scope scenarios:approve.',
          404: NOT_FOUND,
          409: `${NOT_PROPOSED}SCS_PROPOSAL_STALE: another revision went live since the proposal was made; send the change ` +
            'again as a PATCH (a new proposal against the live revision). SCS_CONFLICT: the proposal moves the scenario to a ' +
            `project that has one with this id. ${AMBIGUOUS}`,
        }, { examples: { ...LOOKUP, 403: EXAMPLES.selfApproval, 409: EXAMPLES.proposalStale } }),
      },
    },
  }, async (request, reply) => {
    const { scenarioId, revision } = request.params;
    if (request.principal?.named === false) throw new ApproverUnnamed(scenarioId, revision);
    const approved = await approvals.approve(accessOf(request), subjectOf(request), scenarioId, revision, revisionSource(request, reply));
    request.log.info({ scenarioId, revision }, 'scenario revision approved');
    return sendJson(reply, revisionJson(approved));
  });

  app.post('/compliance/scenarios/:scenarioId/revisions/:revision/reject', {
    config: { scope: 'scenarios:approve' },
    schema: {
      operationId: 'rejectScenarioRevision',
      summary: 'Reject a proposed revision: it never goes live',
      description: 'Closes the proposal (`rejected`, with who and when); the scenario is unchanged. Its author may reject ' +
        'it too (a withdrawal).',
      tags, security,
      params: RevisionParams,
      querystring: ProjectQuery,
      response: {
        200: answered(refOf(RevisionSchema), 'The revision, rejected: it never goes live; the scenario is unchanged.'),
        ...problemResponses([...AUTHENTICATED, 404, 409], { 404: NOT_FOUND, 409: `${NOT_PROPOSED}${AMBIGUOUS}` }, {
          examples: { ...LOOKUP, 403: EXAMPLES.noApproveScope, 409: EXAMPLES.notProposed },
        }),
      },
    },
  }, async (request, reply) => {
    const { scenarioId, revision } = request.params;
    const rejected = await approvals.reject(accessOf(request), subjectOf(request), scenarioId, revision);
    request.log.info({ scenarioId, revision }, 'scenario revision rejected');
    return sendJson(reply, revisionJson(rejected));
  });
};
