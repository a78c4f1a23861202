/**
 * Nullifiers ("one holder, one address") and disclosed values, through the OffChainZKP strategy's answer() and the
 * execution service, with a
 * real SQLite file and a real PostgreSQL store, on the public V3 vector (a real nullifier from a real proof; see
 * ../shared/fixtures/zkp-v3-vectors/README.md) and the public $sd vector. The store keeps hashes only; disclosed values go to the answer and
 * the webhook, never to the audit record.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OffChainZkp } from '../../src/execution/offchain-zkp/strategy.js';
import { Executor, typeDeclarations } from '../../src/execution/index.js';
import { createAttestor } from '../../src/domain/attestation.js';
import { PlanCache } from '../../src/domain/plan-cache.js';
import { ExecutionLifecycle } from '../../src/services/executions.js';
import { RevisionService } from '../../src/services/revisions.js';
import { executionResult } from '../../src/engine/result.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { ExecutionRecord, Store } from '../../src/store/types.js';
import { alwaysLatestStateResolvers, buildAuthorizationRequest, type ZkpQueryConfiguration } from '../../src/zkp/index.js';
import { loadConfig } from '../../src/config.js';
import { tempDir } from '../helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from '../pg.js';
import { haveV3Vectors, iden3DocumentLoader, v3Message, v3Vector, requestSettings, zkpVector } from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';

const LD = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/';
const NOW = 1710951589 * 1000 + 60_000;
const NULLIFIER = v3Message().body.scope[1]?.pub_signals[4] as string;
const v3Rules: ZkpQueryConfiguration[] = [
  { id: 'q-document', query: { type: 'KYCAgeCredential', requestId: 1, attribute: 'documentType', operator: '$eq', value: 99, context: `${LD}kyc-nonmerklized.jsonld`, circuitId: 'credentialAtomicQueryV3', proofType: 'BJJSignature2021', groupId: 2 } },
  { id: 'q-employee', query: { type: 'KYCEmployee', requestId: 2, attribute: 'hireDate', operator: '$eq', value: '2023-12-11', context: `${LD}kyc-v101.json-ld`, circuitId: 'credentialAtomicQueryV3', proofType: 'Iden3SparseMerkleTreeProof', groupId: 1, params: { nullifierSessionId: 12345 } } },
];

const sdVector = zkpVector('sd-sigv2-authv2.json');
const birthday: ZkpQueryConfiguration = {
  id: 'q-birthday', query: { type: 'KYCAgeCredential', requestId: 1, attribute: 'birthday', operator: '$sd', context: `${LD}kyc-v4.jsonld`, circuitId: 'credentialAtomicQuerySigV2' },
};

/** A pending execution of `scenarioId` for `address`, whose authorization request the vector answers. */
function pendingRecord(scenarioId: string, address: string, sd = false): ExecutionRecord {
  const vector = sd ? sdVector : v3Vector;
  const rules = sd ? [birthday] : v3Rules;
  const thid = (JSON.parse(Buffer.from(vector.token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { thid: string }).thid;
  const { pending } = buildAuthorizationRequest(rules, {
    ...requestSettings,
    callbackUrl: 'https://svc.example/cb', verifierDid: vector.verifierDid, message: vector.message || undefined, thid, now: NOW,
  });
  // As the V3 vector was proved:
  if (!sd) for (const entry of pending.request.body.scope) entry.circuitId = 'credentialAtomicQueryV3-beta.1' as never;
  const executionId = randomUUID();
  const head = { objectType: 'OffChainZKP' as const, name: 'Employees', scenarioId, address, executionId };
  const at = new Date(NOW).toISOString();
  return {
    executionId, scenarioId, scenarioRevision: 1, projectId: null, address, state: 'pending', credentials: [], createdAt: at, updatedAt: at,
    results: rules.map((r) => executionResult(head, r, 'pending', { is_valid: false, reasons: ['awaiting'] })),
    pending: pending as never, expiresAt: new Date(pending.expiresAt * 1000).toISOString(),
  };
}

const schema = freshSchema('nullifiers');
/** Webhooks on: the disclosing execution's event is queued (its URL is never called here). */
const HOOKS = { url: 'https://hooks.example/in', secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, allowPrivateTargets: false, maxAttempts: 3, retryBaseMs: 100, timeoutMs: 1000, pollMs: 50 };
const backends: Array<[string, () => Promise<Store>, boolean]> = [
  ['sqlite', async () => openSqliteStore({ file: path.join(tempDir(), 'n.db'), synchronous: 'NORMAL' }), true],
  ['postgres', async () => openPostgresStore({ url: PG_URL, schema }), pgAvailable],
];
afterAll(async () => {
  if (pgAvailable) await dropSchema(schema);
});

describe.each(backends)('%s', (_name, open, available) => {
  it.skipIf(!available)('binds a nullifier hash to the first address, per scenario and project', async () => {
    const store = await open();
    try {
      const b = { projectId: '', scenarioId: 's', nullifierHash: 'n1', addressHash: 'a1', at: new Date(NOW).toISOString() };
      expect(await store.bindNullifier(b)).toBe('a1');
      expect(await store.bindNullifier(b)).toBe('a1');
      expect(await store.bindNullifier({ ...b, addressHash: 'a2' })).toBe('a1');
      expect(await store.bindNullifier({ ...b, scenarioId: 't', addressHash: 'a2' })).toBe('a2');
      expect(await store.bindNullifier({ ...b, projectId: 'p', addressHash: 'a3' })).toBe('a3');
    } finally {
      await store.close();
    }
  });

  it.skipIf(!available || !haveIden3Documents() || !haveV3Vectors())('answers not-valid for the same holder from another address; keeps no nullifier nor disclosed value in the audit record', async () => {
    const store = await open();
    try {
      const pending = new ExecutionLifecycle({
        scenarios: store, executions: store, outbox: store, revisions: new RevisionService(store), plans: new PlanCache(typeDeclarations), now: () => NOW, executor: new Executor(),
        onVerdicts: () => {}, webhook: HOOKS, attestor: await createAttestor({ ttlSeconds: 300 }, () => {}),
        attestationFacts: () => ({ holderBound: false, credentialsVerified: true }),
      });
      const offChain = new OffChainZkp({
        zkp: loadConfig({ ZKP_VERIFIER_DID: v3Vector.verifierDid, ZKP_PROOF_MAX_AGE_SECONDS: '999999999', PUBLIC_BASE_URL: 'https://svc.example' }).zkp,
        publicBaseUrl: 'https://svc.example', pending, answers: store, nullifiers: store, stateResolvers: alwaysLatestStateResolvers(),
        documentLoader: iden3DocumentLoader(),
      });
      const first = pendingRecord('employees', '0x52908400098527886E0F7030069857D2E4169EE7');
      await store.recordExecution(first);
      const a = await offChain.answer(first.executionId, v3Vector.token);
      expect(a?.ok && a.execution.results.map((r) => r.result.status)).toEqual(['valid', 'valid']);
      // The same holder again from the same address: still valid.
      const again = pendingRecord('employees', first.address);
      await store.recordExecution(again);
      expect((await offChain.answer(again.executionId, v3Vector.token))?.ok).toBe(true);
      expect((await store.getExecution(again.executionId))?.results.map((r) => r.result.status)).toEqual(['valid', 'valid']);

      const other = pendingRecord('employees', '0x8ba1f109551bD432803012645Ac136ddd64DBA72');
      await store.recordExecution(other);
      const b = await offChain.answer(other.executionId, v3Vector.token);
      expect(b?.ok && b.execution.results.map((r) => [r.result.status, ...r.result.result.reasons])).toEqual([
        ['valid'],
        ['not-valid', 'the holder of this credential already proved this rule for another address in this scenario (the same nullifier): one holder, one address'],
      ]);
      // Another scenario: its own nullifiers.
      const elsewhere = pendingRecord('contractors', other.address);
      await store.recordExecution(elsewhere);
      const c = await offChain.answer(elsewhere.executionId, v3Vector.token);
      expect(c?.ok && c.execution.results.map((r) => r.result.status)).toEqual(['valid', 'valid']);

      const disclosing = pendingRecord('birthdays', first.address, true);
      await store.recordExecution(disclosing);
      const d = await offChain.answer(disclosing.executionId, sdVector.token);
      expect(d?.ok && d.execution.results[0]?.result).toMatchObject({ status: 'valid', disclosure: { attribute: 'birthday', value: 19960424 } });
      expect(JSON.parse((await store.webhooksOf(disclosing.executionId))[0]?.payload ?? '{}').data.rules[0].disclosure)
        .toEqual({ attribute: 'birthday', value: 19960424 });
      const audit = await store.getExecution(disclosing.executionId);
      expect(audit?.results[0]?.result.status).toBe('valid');
      expect(JSON.stringify(audit)).not.toContain('19960424');

      for (const id of [first.executionId, other.executionId]) {
        const stored = JSON.stringify(await store.getExecution(id)) + JSON.stringify(await store.webhooksOf(id));
        expect(stored).not.toContain(NULLIFIER);
      }
    } finally {
      await store.close();
    }
  });
});
