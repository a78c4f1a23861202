import type { AttestedExecution } from '../domain/attestation.js';
import { verdictOf } from '../domain/verdict.js';
import type { ExecutionRecord, WebhookDelivery } from '../store/types.js';

/** A webhook delivery as its log shows it (see the WebhookDelivery schema): never its payload. */
export function deliveryView(w: WebhookDelivery) {
  return {
    id: w.id, event: w.event, state: w.state, attempts: w.attempts, lastStatus: w.lastStatus, lastError: w.lastError,
    // Only while pending: a delivered or failed one is tried again only when replayed.
    ...(w.state === 'pending' && { nextAttemptAt: w.nextAttemptAt }),
    createdAt: w.createdAt, updatedAt: w.updatedAt,
  };
}

export type ExecutionView = ReturnType<typeof executionView>;

/** An execution as the API shows it (see the Execution schema). */
export function executionView(r: ExecutionRecord, webhooks?: WebhookDelivery[]) {
  return {
    executionId: r.executionId,
    scenarioId: r.scenarioId,
    scenarioRevision: r.scenarioRevision,
    projectId: r.projectId,
    address: r.address,
    state: r.state,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    credentials: r.credentials,
    results: r.results,
    verdict: verdictOf(r.results.map((x) => x.result)),
    ...(r.state === 'pending' && r.expiresAt && { expiresAt: r.expiresAt }),
    ...(r.state === 'pending' && r.pending?.request && { authorizationRequest: r.pending.request }),
    ...(webhooks && webhooks.length > 0 && {
      webhooks: webhooks.map(deliveryView),
    }),
  };
}

/**
 * What an attestation says of an execution: ids, the verdict, each rule's status, the credentials' digests, whether
 * the holder was bound to the address and the credentials verified, as the record keeps them from when it ran (a
 * record without `holderBound`, written before it was kept, is taken as not bound).
 */
export function attestedExecution(r: ExecutionRecord & { scenarioDigest: string }): AttestedExecution {
  return {
    executionId: r.executionId,
    projectId: r.projectId,
    scenarioId: r.scenarioId,
    scenarioRevision: r.scenarioRevision,
    scenarioDigest: r.scenarioDigest,
    address: r.address,
    verdict: verdictOf(r.results.map((x) => x.result)),
    rules: r.results.map((x) => ({ id: x.objectId, status: x.result.status })),
    credentials: r.credentials.map((c) => c.sha256),
    holderBound: r.holderBound === true,
    credentialsVerified: !r.results.some((x) => x.result.verification === 'off'),
  };
}
