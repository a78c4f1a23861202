import type { AttestedExecution } from '../domain/attestation.js';
import { verdictOf } from '../domain/verdict.js';
import type { ExecutionDelivery, ExecutionRecord } from '../store/types.js';

/** Never its payload. */
export function deliveryView(w: ExecutionDelivery) {
  return {
    id: w.id, event: w.event, state: w.state, attempts: w.attempts, lastStatus: w.lastStatus, lastError: w.lastError,
    ...(w.state === 'pending' && { nextAttemptAt: w.nextAttemptAt }),
    createdAt: w.createdAt, updatedAt: w.updatedAt,
  };
}

export type ExecutionView = ReturnType<typeof executionView>;

export function executionView(r: ExecutionRecord, webhooks?: ExecutionDelivery[]) {
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

/** As the record keeps it from when it ran; a record without `holderBound` is taken as not bound. */
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
