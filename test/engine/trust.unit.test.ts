import { describe, it, expect } from 'vitest';
import { compilePlan } from '../../src/engine/index.js';
import { runBoth } from './dry-run.js';
import type { TrustVerdict } from '../../src/engine/types.js';
import type { Credential } from '../../src/schemas/credential.js';
import { ADDRESS, EXECUTION_ID, NOW, TYPES, credential } from './factories.js';
import { at, only } from '../elements.js';
import type { ExecutionResult } from '../../src/schemas/execution.js';
import type { Query, Scenario } from '../../src/schemas/scenario.js';

function scenario(queries: Query[]): Scenario {
  return {
    name: 'Trust',
    type: 'ChallengeQuery',
    smartContractDeployments: [],
    queryConfigurations: queries.map((query, i) => ({ id: `q${i + 1}`, query })),
  };
}

const OK: TrustVerdict = { ok: true };
const REVOKED: TrustVerdict = { ok: false, status: 'not-valid', reason: 'revoked by the issuer' };
const UNRESOLVABLE: TrustVerdict = { ok: false, status: 'error', reason: 'revocation status could not be resolved' };

const age18: Query = { type: 'IDInformation', attribute: 'personalData.age', operator: '$gte', value: 18 };
const noop: Query = { type: 'IDInformation', operator: '$noop' } as Query;
const adult = (id: string, over: Partial<Credential> = {}) => credential(id, { personalData: { age: 30 } }, over);
const minor = (id: string) => credential(id, { personalData: { age: 15 } });

function run(queries: Query[], credentials: Credential[], trust?: (TrustVerdict | undefined)[]): ExecutionResult[] {
  return runBoth(compilePlan('s', 1, scenario(queries), TYPES), { address: ADDRESS, credentials, now: NOW, executionId: EXECUTION_ID, trust });
}

describe('trust verdicts in the engine', () => {
  it('passes when the verdict is ok, and behaves as before without verdicts', () => {
    expect(only(run([age18], [adult('urn:a')], [OK])).result.status).toBe('valid');
    expect(only(run([age18], [adult('urn:a')])).result.status).toBe('valid');
    expect(only(run([age18], [adult('urn:a')], [undefined])).result.status).toBe('valid');
    expect(only(run([age18], [adult('urn:a')], [])).result.status).toBe('valid');
  });

  it('makes a credential with a not-valid verdict unusable for every rule, with its reason', () => {
    const results = run([age18, noop], [adult('urn:a')], [REVOKED]);
    for (const r of [at(results, 0), at(results, 1)]) {
      expect(r.result.status).toBe('not-valid');
      expect(r.result.result.is_valid).toBe(false);
      expect(r.result.result.reasons).toContain('credential #1 (urn:a): revoked by the issuer');
    }
  });

  it('answers error when a candidate could not be judged and none passed', () => {
    const r = only(run([age18], [adult('urn:a')], [UNRESOLVABLE]));
    expect(r.result.status).toBe('error');
    expect(r.result.result.is_valid).toBe(false);
    expect(r.result.result.reasons).toEqual([
      expect.stringContaining('expected a usable IDInformation credential'),
      'credential #1 (urn:a): revocation status could not be resolved',
    ]);
    expect(only(run([noop], [adult('urn:a')], [UNRESOLVABLE])).result.status).toBe('error');
  });

  it('answers error also when the undecided credential sits next to one that fails the query or is revoked', () => {
    const r = only(run([age18], [minor('urn:m'), adult('urn:r'), adult('urn:u')], [OK, REVOKED, UNRESOLVABLE]));
    expect(r.result.status).toBe('error');
    expect(r.result.result.reasons.slice(1)).toEqual([
      'credential #1 (urn:m): personalData.age is not $gte 18',
      'credential #2 (urn:r): revoked by the issuer',
      'credential #3 (urn:u): revocation status could not be resolved',
    ]);
  });

  it('stays valid when another credential passes, whatever the verdicts of the others', () => {
    expect(only(run([age18], [adult('urn:u'), adult('urn:ok')], [UNRESOLVABLE, OK])).result.status).toBe('valid');
    expect(only(run([age18], [adult('urn:r'), adult('urn:ok')], [REVOKED, OK])).result.status).toBe('valid');
  });

  it('answers not-valid when all candidates definitely fail', () => {
    expect(only(run([age18], [minor('urn:m'), adult('urn:r')], [OK, REVOKED])).result.status).toBe('not-valid');
  });

  it('checks dates first: an expired credential is not-valid even when its trust is undecided', () => {
    const expired = adult('urn:e', { expirationDate: '2025-01-01T00:00:00Z' });
    const r = only(run([age18], [expired], [UNRESOLVABLE]));
    expect(r.result.status).toBe('not-valid');
    expect(r.result.result.reasons[1]).toMatch(/^credential #1 \(urn:e\): expired/);
  });

  it('indexes verdicts by position among ALL presented credentials, including those of other types', () => {
    const other = credential('urn:o', {}, { type: ['VerifiableCredential', 'ProofOfResidence'] });
    const r = only(run([age18], [other, adult('urn:a')], [OK, REVOKED]));
    expect(r.result.status).toBe('not-valid');
    expect(r.result.result.reasons).toContain('credential #2 (urn:a): revoked by the issuer');
    expect(only(run([age18], [other, adult('urn:a')], [REVOKED, OK])).result.status).toBe('valid');
  });

  it('never lets an untrusted credential satisfy $ne or $exists false', () => {
    const ne: Query = { type: 'IDInformation', attribute: 'reviewAnswer', operator: '$ne', value: 'RED' };
    const notExists: Query = { type: 'IDInformation', attribute: 'sanctioned', operator: '$exists', value: false };
    const results = run([ne, notExists], [adult('urn:a')], [REVOKED]);
    expect(results.map((r) => r.result.status)).toEqual(['not-valid', 'not-valid']);
  });
});
