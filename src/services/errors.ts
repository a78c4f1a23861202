/** Refusals of the services: each carries its problem code and HTTP status. */
import createError from '@fastify/error';
import type { FieldError } from '../schemas/problem.js';

export const ScenarioNotFound = createError<[string]>('SCS_SCENARIO_NOT_FOUND', 'No scenario with id %s', 404);
export const RevisionNotFound = createError<[string, number]>('SCS_REVISION_NOT_FOUND', 'Scenario %s has no revision %s kept', 404);
export const ScenarioExists = createError<[string]>('SCS_SCENARIO_EXISTS', 'A scenario with id %s exists already', 409);
export const ScenarioAmbiguous = createError<[string, string]>(
  'SCS_SCENARIO_AMBIGUOUS',
  'Scenario id %s names a scenario in more than one project this token holds (%s); add ?projectId= to name one',
  409,
);
const PreconditionFailedError = createError<[string, string, string]>(
  'SCS_PRECONDITION_FAILED',
  'If-Match %s does not match the current ETag %s of the scenario; send If-Match: %s as the ETag header gives it ' +
  '(quotes included, no W/ prefix: If-Match compares strong tags)',
  412,
);
export const preconditionFailed = (given: string, etag: string) => new PreconditionFailedError(given, etag, etag);
export const WebhookDeliveryNotFound = createError<[string, string]>(
  'SCS_WEBHOOK_DELIVERY_NOT_FOUND', 'Execution %s has no webhook delivery with id %s', 404,
);
export const ScenarioChanged = createError<[string, number]>(
  'SCS_SCENARIO_CHANGED', 'Scenario %s is no longer at revision %d, the one this execution ran', 409,
);
export const ScenarioRecreated = createError<[string]>(
  'SCS_SCENARIO_CHANGED', 'Scenario %s at this revision is not the one that ran (deleted and created again, or moved in from another project): ' +
  'its verdict is not this scenario\'s', 409,
);
export const SelfApproval = createError<[string, number]>(
  'SCS_SELF_APPROVAL', 'Scenario %s revision %s was proposed by this token\'s subject: another must approve it (four eyes)', 403,
);
export const ApproverUnnamed = createError<[string, number]>(
  'SCS_APPROVER_UNNAMED', 'Scenario %s revision %s needs an approver this service can tell from its author: this JWT has no sub claim, ' +
  'and every such token of its issuer shares one subject. Approve with a token whose sub names a person', 403,
);
export const ProposalStale = createError<[string, number, number, number]>(
  'SCS_PROPOSAL_STALE', 'Scenario %s revision %s was proposed against revision %s, and revision %s is live now: send the change again as a PATCH ' +
  '(a new proposal against the live revision)', 409,
);
export const DeleteNeedsApproval = createError<[string, string]>(
  'SCS_APPROVAL_REQUIRED', 'Scenario %s is in project %s, where changes need a second person\'s approval: it cannot be deleted directly ' +
  '(deleting it would free its id for a new, unreviewed scenario). Take the project out of SCENARIO_APPROVAL_PROJECTS to delete it', 409,
);
export const NotProposed = createError<[string, number, string]>(
  'SCS_REVISION_NOT_PROPOSED', 'Scenario %s revision %s is not a proposal awaiting a decision (it is %s)', 409,
);
export const ForbiddenProject = createError<[string]>('SCS_FORBIDDEN_PROJECT', '%s', 403);
export const Conflict = createError<[string]>('SCS_CONFLICT', '%s', 409);

const InvalidScenarioError = createError<[string]>('SCS_VALIDATION', '%s', 400);
/** A 400 naming the scenario's failing fields; `errorsTruncated`: whoever found them stopped looking. */
export class InvalidScenario extends InvalidScenarioError {
  constructor(readonly errors: FieldError[], message: string, readonly errorsTruncated = false) {
    super(message);
  }
}

export class AttestationRefused extends InvalidScenarioError {
  readonly errors: FieldError[];
  constructor(message: string) {
    super('The attestation asked for cannot be given');
    this.errors = [{ field: 'querystring.attest', pointer: '/attest', message }];
  }
}
export const ShadowNotFound = createError<[string, number]>('SCS_SHADOW_NOT_FOUND', 'Scenario %s revision %s was never in shadow', 404);
export const ShadowBusy = createError<[string, number]>(
  'SCS_SHADOW_BUSY', 'Scenario %s has revision %s in shadow: stop its shadow first (one shadowed revision per scenario)', 409,
);
export const ShadowUnsupported = createError<[string]>(
  'SCS_SHADOW_UNSUPPORTED', 'Scenario %s is OffChainZKP (or the revision makes it so): a wallet answers one authorization request, so a ' +
  'revision asking other queries cannot be judged on the same proof', 409,
);
