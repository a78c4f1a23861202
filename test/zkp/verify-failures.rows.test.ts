/**
 * The failure table, row by row: each row's failure made by the installed library (failure-triggers.ts) is
 * recognised as that row. A reworded message or a new class fails its row here.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { FAILURE_TABLE, findFailure, type FailureVerdict } from '../../src/zkp/verify-failures.js';
import { TRIGGERS, type TriggerEnv } from './failure-triggers.js';
import { createLibrary, steeredResolvers } from './library.js';
import { haveMtpVector } from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';

/**
 * What each row must decide, written here apart from the table: a row whose verdict changes fails its test.
 */
const EXPECTED_VERDICT: Readonly<Record<string, FailureVerdict>> = {
  'challenge-mismatch': 'not-valid',
  'circuit-mismatch': 'not-valid',
  disclosure: 'not-valid',
  'field-missing': 'not-valid',
  'field-path': 'not-valid',
  'field-slot': 'not-valid',
  'gist-root-mismatch': 'not-valid',
  'gist-root-unknown': 'not-valid',
  'global-state-outdated': 'not-valid',
  'issuer-not-allowed': 'not-valid',
  'issuer-resolver-missing': 'not-valid',
  'issuer-state-outdated': 'not-valid',
  'jwz-challenge': 'not-valid',
  'jwz-critical-header': 'not-valid',
  'jwz-no-packer': 'not-valid',
  'jwz-proof-invalid': 'not-valid',
  'jwz-segments': 'not-valid',
  'jwz-sender': 'not-valid',
  'jwz-typ-missing': 'not-valid',
  'message-expired': 'not-valid',
  'no-proof': 'not-valid',
  'operator-unsupported': 'not-valid',
  operators: 'not-valid',
  'proof-invalid': 'not-valid',
  'proof-outdated': 'not-valid',
  'request-id-missing': 'not-valid',
  'response-not-accepted': 'not-valid',
  'revocation-not-checked': 'not-valid',
  'schema-mismatch': 'not-valid',
  'sender-not-prover': 'not-valid',
  'state-no-transition': 'not-valid',
  'state-not-registered': 'not-valid',
  'state-other-identity': 'not-valid',
  'user-resolver-missing': 'not-valid',
  'proof-type-bjj': 'not-valid',
  'proof-type-mtp': 'not-valid',
  'nullifier-missing': 'not-valid',
  'nullifier-verifier': 'not-valid',
  'nullifier-session': 'not-valid',
  'nullifier-unrequested': 'not-valid',
  'link-unrequested': 'not-valid',
  'link-missing': 'not-valid',
  'linked-query-hash': 'not-valid',
  'accept-unsupported': 'error',
  'circuit-rules-missing': 'error',
  'circuit-unsupported': 'error',
  'context-unavailable': 'error',
  'gist-replaced-time-unknown': 'error',
  'group-context': 'error',
  'group-issuer': 'error',
  'group-type': 'error',
  'jwz-circuit-unsupported': 'error',
  'proof-check-unavailable': 'error',
  'queries-count': 'error',
  'query-type-missing': 'error',
  'message-not-signed': 'refused',
  'no-sender': 'refused',
  'not-addressed': 'refused',
};

let env: TriggerEnv;
beforeAll(async () => {
  const steer = steeredResolvers();
  env = { lib: await createLibrary(steer.resolvers), steer };
});

describe.skipIf(!(haveMtpVector() && haveIden3Documents()))('each failure of the table, raised by the installed library, is recognised as its row', () => {
  it('has a trigger for every row, and no other', () => {
    expect(Object.keys(TRIGGERS).sort()).toEqual(FAILURE_TABLE.map((f) => f.id).sort());
  });

  it.each(FAILURE_TABLE.map((f) => [f.id, EXPECTED_VERDICT[f.id]] as const))('%s (%s)', async (id) => {
    const trigger = TRIGGERS[id];
    if (!trigger) throw new Error(`no trigger for ${id}`);
    const error = await trigger(env);
    const found = findFailure(error);
    expect(found?.id, error instanceof Error ? error.message : String(error)).toBe(id);
    expect(found?.verdict).toBe(EXPECTED_VERDICT[id]);
  });
});
