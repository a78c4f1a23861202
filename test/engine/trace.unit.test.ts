/** tracePlan: what a dry run's trace says of each rule, check by check (src/engine/trace.ts). */
import { describe, it, expect } from 'vitest';
import { compilePlan, outcomeTrace } from '../../src/engine/index.js';
import type { TrustVerdict } from '../../src/engine/types.js';
import type { Credential } from '../../src/schemas/credential.js';
import type { ExecutionResult } from '../../src/schemas/execution.js';
import type { Query, Scenario, ScenarioType } from '../../src/schemas/scenario.js';
import type { CheckTrace, RuleTrace } from '../../src/schemas/trace.js';
import { Ajv } from 'ajv';
import { traceSchemas } from '../../src/schemas/trace.js';
import { RuleStatus } from '../../src/schemas/execution.js';
import { at, only } from '../elements.js';
import { ADDRESS, EXECUTION_ID, NOW, TYPES, credential } from './factories.js';
import { traceBoth } from './dry-run.js';

function scenario(queries: Query[], type: ScenarioType = 'ChallengeQuery'): Scenario {
  return { name: 'Trace', type, smartContractDeployments: [], queryConfigurations: queries.map((query, i) => ({ id: `q${i + 1}`, query })) };
}

function trace(queries: Query[], credentials: Credential[], trust?: (TrustVerdict | undefined)[], type?: ScenarioType) {
  return traceBoth(compilePlan('s', 1, scenario(queries, type), TYPES), { address: ADDRESS, credentials, now: NOW, executionId: EXECUTION_ID, trust });
}

const oneRule = (...args: Parameters<typeof trace>): RuleTrace => only(trace(...args).trace);
const outcomes = (checks: readonly CheckTrace[]) => checks.map((c) => `${c.check}:${c.outcome}`);

const age18: Query = { type: 'IDInformation', attribute: 'personalData.age', operator: '$gte', value: 18 };
const adult = (id: string, over: Partial<Credential> = {}) => credential(id, { personalData: { age: 30 } }, over);
const minor = (id: string) => credential(id, { personalData: { age: 15 } });
const OK: TrustVerdict = { ok: true };
const REVOKED: TrustVerdict = { ok: false, status: 'not-valid', reason: 'revoked by the issuer', check: 'revocation' };
const UNRESOLVABLE: TrustVerdict = { ok: false, status: 'error', reason: 'revocation status could not be resolved', check: 'revocation' };
const TRUST_PASSED = ['structure:pass', 'issuer:pass', 'holder:pass', 'proof:pass', 'issuerKey:pass', 'revocation:pass'];
const DATES_PASSED = ['dates:pass', 'issued:pass', 'expiry:pass'];

const validator = (() => {
  const ajv = new Ajv({ strict: false });
  for (const schema of [RuleStatus, ...traceSchemas]) ajv.addSchema(schema);
  return ajv.compile({ type: 'array', items: { $ref: 'RuleTrace' } });
})();

describe('a valid rule', () => {
  it('names the first credential that passed, lists those considered before it, and no later one', () => {
    const t = oneRule([age18], [minor('urn:m'), adult('urn:a'), adult('urn:b')], [OK, OK, OK]);
    expect(t.status).toBe('valid');
    expect(t.decidingCredential).toEqual({ index: 1, id: 'urn:a' });
    expect(t.decidingCheck).toBeUndefined();
    expect(t.credentials.map((c) => c.index)).toEqual([0, 1]);
    expect(outcomes(at(t.credentials, 1).checks)).toEqual([...DATES_PASSED, ...TRUST_PASSED, 'attribute:pass', 'type:pass', 'value:pass']);
    expect(at(t.credentials, 0).decidingCheck).toBe('value');
  });

  it('says verification was skipped when it is off (no verdicts)', () => {
    const t = oneRule([age18], [adult('urn:a')]);
    expect(outcomes(at(t.credentials, 0).checks)).toEqual([...DATES_PASSED, 'verification:skipped', 'attribute:pass', 'type:pass', 'value:pass']);
    expect(t.decidingCredential).toEqual({ index: 0, id: 'urn:a' });
  });

  it('with $noop, passes on the dates and trust checks alone', () => {
    const t = oneRule([{ type: 'IDInformation', operator: '$noop' }], [adult('urn:a')], [OK]);
    expect(outcomes(at(t.credentials, 0).checks)).toEqual([...DATES_PASSED, ...TRUST_PASSED]);
  });
});

describe('a rule not valid names the deciding check', () => {
  it('of the query: attribute missing, type mismatch, value against the operator, with the rule\'s own words', () => {
    const t = oneRule([age18], [credential('urn:x', { other: 1 }), credential('urn:s', { personalData: { age: 'thirty' } }), minor('urn:m')], [OK, OK, OK]);
    expect(t.status).toBe('not-valid');
    const [c0, c1, c2] = t.credentials;
    expect(outcomes(c0?.checks ?? []).slice(-3)).toEqual(['attribute:fail', 'type:skipped', 'value:skipped']);
    expect(c0?.checks.at(-3)?.reason).toBe('personalData.age is missing');
    expect(outcomes(c1?.checks ?? []).slice(-3)).toEqual(['attribute:pass', 'type:fail', 'value:skipped']);
    expect(c1?.checks.at(-2)?.reason).toBe('expected a number');
    expect(outcomes(c2?.checks ?? []).slice(-3)).toEqual(['attribute:pass', 'type:pass', 'value:fail']);
    expect(c2?.checks.at(-1)?.reason).toBe('personalData.age is not $gte 18');
    // the credential that came closest to passing decides
    expect(t.decidingCheck).toEqual({ check: 'value', credential: 2 });
  });

  it('of the dates: malformed, not yet issued, expired; the query then skipped', () => {
    const cases: Array<[Partial<Credential>, string]> = [
      [{ issuanceDate: 'yesterday' }, 'dates'],
      [{ expirationDate: 'soon' }, 'dates'],
      [{ issuanceDate: '2099-01-01T00:00:00Z' }, 'issued'],
      [{ expirationDate: '2025-01-01T00:00:00Z' }, 'expiry'],
    ];
    for (const [over, check] of cases) {
      const t = oneRule([age18], [adult('urn:d', over)], [OK]);
      expect(t.status).toBe('not-valid');
      expect(t.decidingCheck).toEqual({ check, credential: 0 });
      const checks = at(t.credentials, 0).checks;
      expect(checks.slice(-3).map((c) => c.outcome)).toEqual(['skipped', 'skipped', 'skipped']);
      expect(JSON.stringify(t)).not.toMatch(/20(25|99)-01-01|yesterday|soon/);
    }
  });

  it('of the trust checks: the failed one, those before it passed, those after skipped', () => {
    const t = oneRule([age18], [adult('urn:h')], [{ ok: false, status: 'not-valid', reason: 'belongs to another holder', check: 'holder' }]);
    expect(outcomes(at(t.credentials, 0).checks)).toEqual([
      ...DATES_PASSED, 'structure:pass', 'issuer:pass', 'holder:fail', 'proof:skipped', 'issuerKey:skipped', 'revocation:skipped',
      'attribute:skipped', 'type:skipped', 'value:skipped',
    ]);
    expect(t.decidingCheck).toEqual({ check: 'holder', credential: 0 });
    const unnamed = oneRule([age18], [adult('urn:u')], [{ ok: false, status: 'not-valid', reason: 'untrusted' }]);
    expect(unnamed.decidingCheck).toEqual({ check: 'verification', credential: 0 });
  });

  it('error: the first credential whose check was undecided, even next to one that came closer', () => {
    const t = oneRule([age18], [minor('urn:m'), adult('urn:r'), adult('urn:u')], [OK, REVOKED, UNRESOLVABLE]);
    expect(t.status).toBe('error');
    expect(t.decidingCheck).toEqual({ check: 'revocation', credential: 2 });
    expect(at(t.credentials, 2).checks.find((c) => c.check === 'revocation')?.outcome).toBe('undecided');
  });

  it('dates before trust: an expired credential whose revocation is undecided is decided by its expiry', () => {
    const t = oneRule([age18], [adult('urn:e', { expirationDate: '2025-01-01T00:00:00Z' })], [UNRESOLVABLE]);
    expect(t.status).toBe('not-valid');
    expect(t.decidingCheck).toEqual({ check: 'expiry', credential: 0 });
  });

  it('presented, when no credential of the type was sent; rule, when the rule is not decided here', () => {
    const other = credential('urn:o', {}, { type: ['VerifiableCredential', 'ProofOfResidence'] });
    expect(oneRule([age18], [other]).decidingCheck).toEqual({ check: 'presented' });
    expect(oneRule([age18], []).credentials).toEqual([]);
    const zkp = oneRule([{ ...age18, requestId: 1 }], [adult('urn:a')], undefined, 'OnChainZKP');
    expect(zkp).toEqual({ ruleId: 'q1', status: 'error', credentials: [], decidingCheck: { check: 'rule' } });
    const invalid = oneRule([{ type: 'IDInformation', attribute: 'a', operator: '$between', value: 'x' } as Query], [adult('urn:a')]);
    expect(invalid.decidingCheck).toEqual({ check: 'rule' });
  });

  it('lists at most 10 credentials and counts the rest, judging all of them', () => {
    const many = Array.from({ length: 12 }, (_, i) => minor(`urn:m${i}`));
    many.push(adult('urn:late', { expirationDate: '2025-01-01T00:00:00Z' }));
    const t = oneRule([age18], many);
    expect(t.credentials).toHaveLength(10);
    expect(t.credentialsNotListed).toBe(3);
    expect(t.decidingCheck).toEqual({ check: 'value', credential: 0 });
  });
});

describe('the trace', () => {
  it('never holds a value of the credentials, nor their dates, whatever the outcome', () => {
    const secret = credential('urn:s', { personalData: { age: 987654321, name: 'Zyxwvu Distinctova' }, reviewAnswer: 'QXJ-unique-7731' }, {
      issuanceDate: '2024-03-17T08:09:10Z', expirationDate: '2029-11-12T13:14:15Z',
    });
    const queries: Query[] = [
      age18, { ...age18, value: 999999999 }, { type: 'IDInformation', attribute: 'reviewAnswer', operator: '$eq', value: 'GREEN' },
      { type: 'IDInformation', attribute: 'personalData.name', operator: '$in', value: ['Ann', 'Bob'] },
      { type: 'IDInformation', attribute: 'personalData.name', operator: '$exists', value: false },
      { type: 'IDInformation', attribute: 'personalData.name', operator: '$gt', value: 3 },
    ];
    for (const trust of [[OK], [REVOKED], [UNRESOLVABLE], undefined]) {
      const { trace: t } = trace(queries, [secret], trust);
      const text = JSON.stringify(t);
      for (const value of ['987654321', 'Zyxwvu', 'Distinctova', 'QXJ-unique-7731', '2024-03-17', '2029-11-12']) expect(text).not.toContain(value);
    }
  });

  it('matches the RuleTrace schema', () => {
    const { trace: t } = trace([age18, { type: 'IDInformation', operator: '$noop' }], [minor('urn:m'), adult('urn:a')], [REVOKED, OK]);
    expect(validator(t), JSON.stringify(validator.errors)).toBe(true);
    expect(validator([{ ruleId: 'q1', status: 'valid', credentials: [], decidingCheck: { check: 'luck' } }])).toBe(false);
  });

  it('of a rule decided outside the engine: its status, the given check where not valid, and the note', () => {
    const result = (status: ExecutionResult['result']['status']): ExecutionResult => ({
      objectType: 'OnChainZKP', objectId: 'r1', name: 'n', address: ADDRESS, scenarioId: 's', executionId: EXECUTION_ID,
      result: { result: { is_valid: status === 'valid', reasons: [] }, executionId: EXECUTION_ID, status, query: age18 },
    });
    expect(outcomeTrace(result('not-valid'), 'chain', 'read')).toEqual({ ruleId: 'r1', status: 'not-valid', credentials: [], decidingCheck: { check: 'chain' }, note: 'read' });
    expect(outcomeTrace(result('pending'), 'authorizationRequest', 'issued')).toEqual({ ruleId: 'r1', status: 'pending', credentials: [], note: 'issued' });
  });
});
