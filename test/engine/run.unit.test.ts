/**
 * runPlan end to end, one describe per topic (result shape, credential selection, attribute paths, reasons,
 * zero-knowledge scenarios, robustness) on the helpers below. Over 300 lines: split, each part would need its own
 * copy of those helpers.
 */
import { describe, it, expect } from 'vitest';
import { compilePlan, type Plan } from '../../src/engine/index.js';
import { runBoth } from './dry-run.js';
import type { Credential } from '../../src/schemas/credential.js';
import { compilePath } from '../../src/engine/path.js';
import { ADDRESS, EXECUTION_ID, NOW, TYPES, credential } from './factories.js';
import type { ExecutionResult } from '../../src/schemas/execution.js';
import type { Query, QueryConfiguration, Scenario, ScenarioType } from '../../src/schemas/scenario.js';

function scenario(queries: (Query | QueryConfiguration)[], type: ScenarioType = 'ChallengeQuery'): Scenario {
  return {
    name: 'Adult KYC',
    type,
    smartContractDeployments: [],
    queryConfigurations: queries.map((q, i) => ('query' in q ? q : { id: `q${i + 1}`, query: q })),
  };
}

function run(plan: Plan, credentials: Credential[], now = NOW): ExecutionResult[] {
  return runBoth(plan, { address: ADDRESS, credentials, now, executionId: EXECUTION_ID });
}

/** Runs a single-rule ChallengeQuery scenario. */
function one(query: Query, credentials: Credential[], now = NOW): ExecutionResult {
  const [r] = run(compilePlan('scn-1', 1, scenario([query]), TYPES), credentials, now);
  if (r === undefined) throw new Error('one rule, one result');
  return r;
}

const age18: Query = { type: 'IDInformation', attribute: 'personalData.age', operator: '$gte', value: 18 };
const adult = (id: string, over: Partial<Credential> = {}) => credential(id, { personalData: { age: 30 } }, over);

describe('result shape and order', () => {
  it('returns one result per query configuration, in the scenario order, with the full documented shape', () => {
    const q1: Query = { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' };
    const q2: Query = { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gte' };
    const plan = compilePlan('scn-1', 3, scenario([{ id: 'q-kyc', query: q1 }, { id: 'q-age', query: q2 }]), TYPES);
    const results = run(plan, [credential('urn:uuid:a', { reviewAnswer: 'GREEN', personalData: { age: 17 } })]);
    expect(results).toHaveLength(2);
    expect(results[0]).toEqual({
      objectType: 'ChallengeQuery',
      objectId: 'q-kyc',
      name: 'Adult KYC',
      address: ADDRESS,
      scenarioId: 'scn-1',
      executionId: EXECUTION_ID,
      result: { result: { is_valid: true, reasons: [] }, executionId: EXECUTION_ID, status: 'valid', query: q1 },
    });
    expect(results[1]?.objectId).toBe('q-age');
    expect(results[1]?.result.status).toBe('not-valid');
    expect(results[1]?.result.result.is_valid).toBe(false);
    expect(results[1]?.result.query).toEqual(q2);
    expect(Object.keys(results[1] ?? {})).toEqual(['objectType', 'objectId', 'name', 'address', 'scenarioId', 'executionId', 'result']);
    expect(Object.keys(results[1]?.result ?? {})).toEqual(['result', 'executionId', 'status', 'query']);
  });

  it('puts the run\'s extras (ChallengeQuery\'s verification off) into every result, after the query', () => {
    const plan = compilePlan('s', 1, scenario([age18, { ...age18, value: 99 }]), TYPES);
    const results = runBoth(plan, { address: ADDRESS, credentials: [adult('urn:uuid:a')], now: NOW, executionId: EXECUTION_ID, extras: { verification: 'off' } });
    expect(results.map((r) => r.result.status)).toEqual(['valid', 'not-valid']);
    for (const r of results) expect(Object.keys(r.result)).toEqual(['result', 'executionId', 'status', 'query', 'verification']);
    expect(results.map((r) => r.result.verification)).toEqual(['off', 'off']);
  });

  it('keeps the order of many rules, whatever their outcome', () => {
    const queries: Query[] = Array.from({ length: 12 }, (_, i) => ({
      type: 'IDInformation', attribute: 'n', operator: '$eq', value: i % 3,
    }));
    const results = run(compilePlan('s', 1, scenario(queries), TYPES), [credential('urn:uuid:a', { n: 1 })]);
    expect(results.map((r) => r.objectId)).toEqual(queries.map((_, i) => `q${i + 1}`));
    expect(results.map((r) => r.result.result.is_valid)).toEqual(queries.map((_, i) => i % 3 === 1));
  });

  it('returns no results for a scenario without query configurations', () => {
    expect(run(compilePlan('s', 1, scenario([]), TYPES), [adult('urn:uuid:a')])).toEqual([]);
  });

  it('answers valid rules with one frozen inner result that no consumer can change', () => {
    const results = run(compilePlan('s', 1, scenario([age18, age18]), TYPES), [adult('urn:uuid:a')]);
    expect(results[0]?.result.result).toEqual({ is_valid: true, reasons: [] });
    expect(Object.isFrozen(results[0]?.result.result)).toBe(true);
    expect(() => results[0]?.result.result.reasons.push('x')).toThrow(TypeError);
    expect(() => { (results[1]?.result.result as { is_valid: boolean }).is_valid = false; }).toThrow(TypeError);
    expect(run(compilePlan('s', 1, scenario([age18]), TYPES), [adult('urn:uuid:b')])[0]?.result.result.reasons).toEqual([]);
  });

  it('echoes a frozen copy of the query, unaffected by later changes to the scenario', () => {
    const value = ['FRA', 'DEU'];
    const query: Query = { type: 'IDInformation', attribute: 'c', operator: '$in', value };
    const s = scenario([query]);
    const plan = compilePlan('s', 1, s, TYPES);
    value.push('ITA');
    query.operator = '$nin';
    const [r] = run(plan, [credential('urn:uuid:a', { c: 'FRA' })]);
    expect(r?.result.status).toBe('valid');
    expect(r?.result.query).toEqual({ type: 'IDInformation', attribute: 'c', operator: '$in', value: ['FRA', 'DEU'] });
    expect(Object.isFrozen(r?.result.query)).toBe(true);
  });

  it('carries the plan identity: scenarioId, revision, name, type', () => {
    const plan = compilePlan('scn-9', 7, scenario([age18]), TYPES);
    expect(plan).toMatchObject({ scenarioId: 'scn-9', revision: 7, name: 'Adult KYC', type: 'ChallengeQuery' });
    expect(plan.rules.map((r) => r.id)).toEqual(['q1']);
  });

  it('reuses one compiled plan across runs with different credentials and clocks', () => {
    const plan = compilePlan('s', 1, scenario([age18]), TYPES);
    const young = credential('urn:uuid:y', { personalData: { age: 16 } });
    expect(run(plan, [adult('urn:uuid:a')])[0]?.result.status).toBe('valid');
    expect(run(plan, [young])[0]?.result.status).toBe('not-valid');
    expect(run(plan, [adult('urn:uuid:a')], Date.parse('2031-01-01T00:00:00Z'))[0]?.result.status).toBe('not-valid');
    expect(run(plan, [adult('urn:uuid:a')])[0]?.result.status).toBe('valid');
  });
});

describe('credential selection and usability', () => {
  it('passes when only one of several credentials satisfies the rule', () => {
    const r = one(age18, [
      credential('urn:uuid:young', { personalData: { age: 16 } }),
      credential('urn:uuid:nodata', {}),
      adult('urn:uuid:ok'),
      credential('urn:uuid:str', { personalData: { age: '40' } }),
    ]);
    expect(r.result.status).toBe('valid');
    expect(r.result.result).toEqual({ is_valid: true, reasons: [] });
  });

  it('ignores credentials of another type, even when their subject would satisfy the rule', () => {
    const aml = adult('urn:uuid:aml', { type: ['VerifiableCredential', 'AMLScreeningsResults'] });
    const r = one(age18, [aml]);
    expect(r.result.status).toBe('not-valid');
    expect(r.result.result.reasons).toEqual([
      'expected a usable IDInformation credential with personalData.age $gte 18',
      'no credential of type IDInformation was presented',
    ]);
  });

  it('matches the query type against any entry of the credential type array, exactly', () => {
    expect(one(age18, [adult('urn:uuid:a', { type: ['IDInformation'] })]).result.status).toBe('valid');
    expect(one(age18, [adult('urn:uuid:a', { type: ['idinformation'] })]).result.status).toBe('not-valid');
    expect(one(age18, [adult('urn:uuid:a', { type: ['IDInformationV2'] })]).result.status).toBe('not-valid');
  });

  it('answers "no credential of the type" when no credentials are presented', () => {
    const r = one(age18, []);
    expect(r.result.status).toBe('not-valid');
    expect(r.result.result.reasons[1]).toBe('no credential of type IDInformation was presented');
  });

  it('refuses an expired credential, and treats expirationDate == now as expired', () => {
    const r = one(age18, [adult('urn:uuid:e', { expirationDate: '2025-06-01T12:00:00Z' })]);
    expect(r.result.status).toBe('not-valid');
    expect(r.result.result.reasons[1]).toBe(
      'credential #1 (urn:uuid:e): expired (expirationDate 2025-06-01T12:00:00Z is not after the evaluation time)');
    expect(one(age18, [adult('urn:uuid:e', { expirationDate: '2025-06-01T12:00:00.001Z' })]).result.status).toBe('valid');
  });

  it('treats a credential without expirationDate as never expiring (W3C and iden3 make it optional)', () => {
    const { expirationDate: _omitted, ...timeless } = adult('urn:uuid:t');
    expect(one(age18, [timeless]).result.status).toBe('valid');
    expect(one(age18, [timeless], Date.parse('2999-12-31T23:59:59Z')).result.status).toBe('valid');
    // Present but unusable is still refused: only absence means "never expires".
    expect(one(age18, [adult('urn:uuid:t', { expirationDate: '' })]).result.status).toBe('not-valid');
  });

  it('refuses a credential not yet issued, and accepts issuanceDate == now', () => {
    const r = one(age18, [adult('urn:uuid:f', { issuanceDate: '2025-06-01T12:00:00.001Z' })]);
    expect(r.result.status).toBe('not-valid');
    expect(r.result.result.reasons[1]).toBe(
      'credential #1 (urn:uuid:f): not yet issued (issuanceDate 2025-06-01T12:00:00.001Z is after the evaluation time)');
    expect(one(age18, [adult('urn:uuid:f', { issuanceDate: '2025-06-01T12:00:00Z' })]).result.status).toBe('valid');
  });

  it('reads credential dates with offsets as instants', () => {
    // 2025-06-01T13:30:00+02:00 is 11:30Z: already expired at 12:00Z
    expect(one(age18, [adult('urn:uuid:o', { expirationDate: '2025-06-01T13:30:00+02:00' })]).result.status).toBe('not-valid');
    // 2025-06-01T08:30:00-04:00 is 12:30Z: not expired yet
    expect(one(age18, [adult('urn:uuid:o', { expirationDate: '2025-06-01T08:30:00-04:00' })]).result.status).toBe('valid');
  });

  it('makes a credential with an unparseable issuanceDate or expirationDate unusable, with a reason', () => {
    const badIssued = one(age18, [adult('urn:uuid:b', { issuanceDate: 'yesterday' })]);
    expect(badIssued.result.status).toBe('not-valid');
    expect(badIssued.result.result.reasons[1]).toBe(
      'credential #1 (urn:uuid:b): issuanceDate is not a valid RFC 3339 date-time, so the credential cannot be used');
    const badExpiry = one(age18, [adult('urn:uuid:c', { expirationDate: '2030-02-30T00:00:00Z' })]);
    expect(badExpiry.result.result.reasons[1]).toBe(
      'credential #1 (urn:uuid:c): expirationDate is not a valid RFC 3339 date-time, so the credential cannot be used');
    // A date without time is not an RFC 3339 date-time either.
    expect(one(age18, [adult('urn:uuid:d', { expirationDate: '2030-01-01' })]).result.status).toBe('not-valid');
  });

  it('never lets an unusable credential satisfy $noop, $exists false or $ne', () => {
    const expired = credential('urn:uuid:x', { reviewAnswer: 'GREEN' }, { expirationDate: '2020-01-01T00:00:00Z' });
    for (const q of [
      { type: 'IDInformation', operator: '$noop' },
      { type: 'IDInformation', attribute: 'nothing', operator: '$exists', value: false },
      { type: 'IDInformation', attribute: 'reviewAnswer', operator: '$ne', value: 'RED' },
    ] as Query[]) {
      expect(one(q, [expired]).result.status, q.operator).toBe('not-valid');
    }
  });

  it('explains why EACH candidate credential failed, naming it by position (among all presented) and id', () => {
    const r = one(age18, [
      adult('urn:uuid:other', { type: ['VerifiableCredential', 'ProofOfResidence'] }),
      adult('urn:uuid:old', { expirationDate: '2021-01-01T00:00:00Z' }),
      credential('urn:uuid:young', { personalData: { age: 16 } }),
      credential('urn:uuid:none', { personalData: {} }),
      credential('urn:uuid:text', { personalData: { age: 'thirty' } }),
      adult('urn:uuid:future', { issuanceDate: '2026-01-01T00:00:00Z' }),
    ]);
    expect(r.result.result.reasons).toEqual([
      'expected a usable IDInformation credential with personalData.age $gte 18',
      'credential #2 (urn:uuid:old): expired (expirationDate 2021-01-01T00:00:00Z is not after the evaluation time)',
      'credential #3 (urn:uuid:young): personalData.age is not $gte 18',
      'credential #4 (urn:uuid:none): personalData.age is missing',
      'credential #5 (urn:uuid:text): type mismatch: personalData.age is a string, expected a number',
      'credential #6 (urn:uuid:future): not yet issued (issuanceDate 2026-01-01T00:00:00Z is after the evaluation time)',
    ]);
  });

  it('lists a credential once even when its type array names the type twice', () => {
    const r = one(age18, [credential('urn:uuid:dup', { personalData: { age: 3 } }, { type: ['IDInformation', 'IDInformation'] })]);
    expect(r.result.result.reasons).toHaveLength(2);
  });

  it('explains a $noop failure by the unusable credentials', () => {
    const r = one({ type: 'IDInformation', operator: '$noop' }, [adult('urn:uuid:old', { expirationDate: '2021-01-01T00:00:00Z' })]);
    expect(r.result.result.reasons).toEqual([
      'expected a usable IDInformation credential ($noop)',
      'credential #1 (urn:uuid:old): expired (expirationDate 2021-01-01T00:00:00Z is not after the evaluation time)',
    ]);
  });

  it('lets several rules read different credential types in one run', () => {
    const results = run(compilePlan('s', 1, scenario([
      age18,
      { type: 'ProofOfResidence', attribute: 'country', operator: '$in', value: ['FRA', 'DEU'] },
      { type: 'AMLScreeningsResults', operator: '$noop' },
    ]), TYPES), [
      adult('urn:uuid:id'),
      credential('urn:uuid:por', { country: 'DEU' }, { type: ['VerifiableCredential', 'ProofOfResidence'] }),
    ]);
    expect(results.map((r) => r.result.status)).toEqual(['valid', 'valid', 'not-valid']);
  });

  it('reads one credential that carries two types for rules of either type', () => {
    const both = credential('urn:uuid:both', { personalData: { age: 30 }, country: 'FRA' },
      { type: ['VerifiableCredential', 'IDInformation', 'ProofOfResidence'] });
    const results = run(compilePlan('s', 1, scenario([
      age18, { type: 'ProofOfResidence', attribute: 'country', operator: '$eq', value: 'FRA' },
    ]), TYPES), [both]);
    expect(results.map((r) => r.result.status)).toEqual(['valid', 'valid']);
  });
});

describe('attribute paths', () => {
  const subject = {
    reviewAnswer: 'GREEN',
    personalData: { age: 30, address: { country: 'FRA' }, nationalities: ['FRA', 'DEU'], nothing: null },
    documents: [{ kind: 'passport' }, { kind: 'id-card' }],
    'odd key': 1,
  };
  const at = (attribute: string, operator: Query['operator'], value?: Query['value']) => {
    const q: Query = { type: 'IDInformation', attribute, operator };
    if (value !== undefined) q.value = value;
    return one(q, [credential('urn:uuid:p', subject)]).result.status;
  };

  it('reads top-level, nested and deeply nested attributes', () => {
    expect(at('reviewAnswer', '$eq', 'GREEN')).toBe('valid');
    expect(at('personalData.age', '$eq', 30)).toBe('valid');
    expect(at('personalData.address.country', '$eq', 'FRA')).toBe('valid');
    expect(at('odd key', '$eq', 1)).toBe('valid');
  });

  it('indexes arrays with numeric segments', () => {
    expect(at('personalData.nationalities.1', '$eq', 'DEU')).toBe('valid');
    expect(at('documents.0.kind', '$eq', 'passport')).toBe('valid');
    expect(at('documents.1.kind', '$eq', 'id-card')).toBe('valid');
    expect(at('documents.2.kind', '$exists', true)).toBe('not-valid');
  });

  it('treats non-canonical indexes and array properties like length as missing', () => {
    expect(at('documents.01.kind', '$exists', true)).toBe('not-valid');
    expect(at('documents.-1', '$exists', true)).toBe('not-valid');
    expect(at('documents.length', '$exists', true)).toBe('not-valid');
    expect(at('documents.length', '$exists', false)).toBe('valid');
  });

  it('treats a path through a string, number or null as missing', () => {
    expect(at('reviewAnswer.length', '$exists', false)).toBe('valid');
    expect(at('reviewAnswer.0', '$exists', false)).toBe('valid');
    expect(at('personalData.age.x', '$exists', false)).toBe('valid');
    expect(at('personalData.nothing.x', '$exists', false)).toBe('valid');
  });

  it('treats __proto__, constructor and other inherited names as plain missing keys', () => {
    for (const path of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'constructor.name',
      '__proto__.constructor', 'personalData.__proto__', 'personalData.constructor.prototype', 'documents.constructor']) {
      expect(at(path, '$exists', true), path).toBe('not-valid');
      expect(at(path, '$exists', false), path).toBe('valid');
      expect(at(path, '$ne', 'x'), path).toBe('not-valid');
    }
  });

  it('does not see a property added to Object.prototype (prototype pollution)', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.pollutedAge = 99;
    try {
      expect(at('pollutedAge', '$gte', 18)).toBe('not-valid');
      expect(at('personalData.pollutedAge', '$exists', true)).toBe('not-valid');
    } finally {
      delete proto.pollutedAge;
    }
  });

  it('reads a JSON document\'s own "__proto__" key as a plain key, without touching prototypes', () => {
    const parsed = JSON.parse('{"__proto__": {"age": 40}}') as Record<string, unknown>;
    const q: Query = { type: 'IDInformation', attribute: '__proto__.age', operator: '$gte', value: 18 };
    expect(one(q, [credential('urn:uuid:j', parsed)]).result.status).toBe('valid');
    expect(({} as Record<string, unknown>).age).toBeUndefined();
  });

  it('reads keys that are JavaScript syntax as plain keys', () => {
    // No dots: a dot separates path segments.
    // eslint-disable-next-line no-template-curly-in-string -- a key that spells a template literal, on purpose
    const keys = ['a"b', "a'b", 'a\\b', '`${globalThis}`', "'); globalThis['injected'] = 1; ('", '"); globalThis["injected"] = 1; ("', '*/ x /*', 'line\u2028sep', 'nl\nkey'];
    const odd: Record<string, unknown> = {};
    keys.forEach((k, i) => { odd[k] = { n: i }; });
    for (const [i, k] of keys.entries()) {
      const q: Query = { type: 'IDInformation', attribute: `${k}.n`, operator: '$eq', value: i };
      expect(one(q, [credential('urn:uuid:k', odd)]).result.status, k).toBe('valid');
      expect(one({ ...q, value: i + 1 }, [credential('urn:uuid:k', odd)]).result.status, k).toBe('not-valid');
    }
    expect((globalThis as Record<string, unknown>).injected).toBeUndefined();
  });

  it('walks a path on arbitrary JSON as the rules say: own keys, canonical array indexes, else missing', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
    const KEYS = ['a', 'b', '0', '1', '01', 'length', 'constructor', '__proto__', 'toString'];
    const json = (depth: number): unknown => {
      if (depth <= 0 || rand() < 0.25) return pick([null, true, 0, 18, '', 'GREEN', [], {}]);
      if (rand() < 0.4) return Array.from({ length: Math.floor(rand() * 3) }, () => json(depth - 1));
      const o: Record<string, unknown> = rand() < 0.1 ? Object.create(null) as Record<string, unknown> : {};
      for (const k of KEYS) if (rand() < 0.3) Object.defineProperty(o, k, { value: json(depth - 1), enumerable: true, writable: true, configurable: true });
      return o;
    };
    const reference = (path: string, subject: unknown): unknown => path.split('.').reduce<unknown>((v, k) => {
      if (typeof v !== 'object' || v === null) return undefined;
      if (Array.isArray(v)) return /^(?:0|[1-9][0-9]*)$/.test(k) && Number(k) < v.length ? v[Number(k)] : undefined;
      return Object.prototype.hasOwnProperty.call(v, k) ? (v as Record<string, unknown>)[k] : undefined;
    }, subject);
    for (let i = 0; i < 2000; i++) {
      const path = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(KEYS)).join('.');
      const subject = json(4);
      expect(compilePath(path)(subject), path).toBe(reference(path, subject));
    }
  });

  it('reads a subject with a null prototype', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { personalData: { age: 30 } });
    expect(one(age18, [credential('urn:uuid:n', bare)]).result.status).toBe('valid');
  });
});

describe('reasons never echo the holder\'s data', () => {
  const HOLDER = {
    id: 'did:example:holder-secret-did',
    reviewAnswer: 'YELLOW',
    personalData: {
      firstName: 'Zebulon', lastName: 'Quixotic', age: 63, ageText: 'sixty-three', citizenship: 'XQZ',
      birthDate: 19830517, nationalities: ['XQZ', 'WVU'], flag: true, address: { city: 'Smallville' },
    },
    selfie: 'aGVsbG8gc2VsZmllIGltYWdl',
  };
  const secrets = ['holder-secret-did', 'YELLOW', 'Zebulon', 'Quixotic', '63', 'sixty-three', 'XQZ', 'WVU', '19830517',
    'Smallville', 'aGVsbG8gc2VsZmllIGltYWdl'];

  it('explains many failing rules without any attribute value of the credential subject', () => {
    const queries: Query[] = [
      { type: 'IDInformation', attribute: 'reviewAnswer', operator: '$eq', value: 'GREEN' },
      { type: 'IDInformation', attribute: 'reviewAnswer', operator: '$in', value: ['GREEN', 'RED'] },
      { type: 'IDInformation', attribute: 'personalData.firstName', operator: '$eq', value: 'Alice' },
      { type: 'IDInformation', attribute: 'personalData.firstName', operator: '$eq', value: 12 },
      { type: 'IDInformation', attribute: 'personalData.age', operator: '$lt', value: 18 },
      { type: 'IDInformation', attribute: 'personalData.age', operator: '$between', value: [0, 17] },
      { type: 'IDInformation', attribute: 'personalData.firstName', operator: '$ne', value: 7 },
      { type: 'IDInformation', attribute: 'personalData.ageText', operator: '$gte', value: 18 },
      { type: 'IDInformation', attribute: 'personalData.ageText', operator: '$gte', value: '2001-01-01' },
      { type: 'IDInformation', attribute: 'personalData.citizenship', operator: '$nin', value: [1, 2] },
      { type: 'IDInformation', attribute: 'personalData.nationalities', operator: '$in', value: ['FRA'] },
      { type: 'IDInformation', attribute: 'personalData.nationalities', operator: '$eq', value: ['FRA', 'DEU'] },
      { type: 'IDInformation', attribute: 'personalData.birthDate', operator: '$gte', value: 20000101 },
      { type: 'IDInformation', attribute: 'personalData.flag', operator: '$eq', value: false },
      { type: 'IDInformation', attribute: 'personalData.address', operator: '$eq', value: 'city' },
      { type: 'IDInformation', attribute: 'personalData.address', operator: '$exists', value: false },
      { type: 'IDInformation', attribute: 'selfie', operator: '$eq', value: 'other' },
      { type: 'IDInformation', attribute: 'id', operator: '$in', value: ['did:example:someone'] },
    ];
    const results = run(compilePlan('s', 1, scenario(queries), TYPES), [
      credential('urn:uuid:holder-cred', HOLDER),
      credential('urn:uuid:holder-cred-2', { ...HOLDER, personalData: { ...HOLDER.personalData, age: '63' } }),
    ]);
    const failing = results.filter((r) => r.result.status === 'not-valid');
    expect(failing.length).toBe(queries.length);
    for (const r of failing) expect(r.result.result.reasons.length).toBe(3); // header + one line per credential
    const text = JSON.stringify(results);
    for (const secret of secrets) expect(text, secret).not.toContain(secret);
    // Every reason still says which rule failed and why, per credential.
    expect(failing[0]?.result.result.reasons).toEqual([
      'expected a usable IDInformation credential with reviewAnswer $eq "GREEN"',
      'credential #1 (urn:uuid:holder-cred): reviewAnswer is not $eq "GREEN"',
      'credential #2 (urn:uuid:holder-cred-2): reviewAnswer is not $eq "GREEN"',
    ]);
  });
});

describe('zero-knowledge proof scenarios', () => {
  // Their strategies (src/execution) decide them; the engine compiles their rules and, asked to run them, never passes one.
  for (const type of ['OffChainZKP', 'OnChainZKP'] as const) {
    it(`${type}: runPlan answers error for every rule, saying the rule engine does not decide this type`, () => {
      const plan = compilePlan('z', 1, scenario([
        { ...age18, requestId: 1, operator: '$gt' },
        { type: 'IDInformation', requestId: 2, operator: '$noop' },
      ], type), TYPES);
      const results = run(plan, [adult('urn:uuid:perfect')]);
      expect(results).toHaveLength(2);
      for (const r of results) {
        expect(r.objectType).toBe(type);
        expect(r.result.status).toBe('error');
        expect(r.result.result.is_valid).toBe(false);
        expect(r.result.result.reasons).toEqual([`scenario type ${type} is not decided by the rule engine, so this rule cannot be decided here`]);
      }
      expect(results.map((r) => r.objectId)).toEqual(['q1', 'q2']);
    });
  }

  it('never reads credentials for ZKP scenarios', () => {
    const plan = compilePlan('z', 1, scenario([{ ...age18, requestId: 1, operator: '$gt' }], 'OffChainZKP'), TYPES);
    expect(plan.credentialSlots.size).toBe(0);
  });
});

describe('robustness', () => {
  it('turns a query that should have failed validation into an error rule instead of throwing', () => {
    const bad = [
      { type: 'IDInformation', operator: '$gte', value: 18 },
      { type: 'IDInformation', attribute: 'a', operator: '$gte' },
      { type: 'IDInformation', attribute: 'a', operator: '$gte', value: true },
      { type: 'IDInformation', attribute: 'a', operator: '$in', value: [] },
      { type: 'IDInformation', attribute: 'a', operator: '$between', value: [1, '2001-01-01'] },
      { type: 'IDInformation', attribute: 'a', operator: '$like', value: 'x' },
    ] as unknown as Query[];
    const results = run(compilePlan('s', 1, scenario(bad), TYPES), [adult('urn:uuid:a')]);
    for (const r of results) {
      expect(r.result.status).toBe('error');
      expect(r.result.result.is_valid).toBe(false);
      expect(r.result.result.reasons[0]).toMatch(/^this rule is invalid and cannot be evaluated: /);
    }
  });

  it('answers error for a scenario type without an evaluator', () => {
    const s = { ...scenario([age18]), type: 'Unknown' as ScenarioType };
    const [r] = run(compilePlan('s', 1, s, TYPES), [adult('urn:uuid:a')]);
    expect(r?.result.status).toBe('error');
    expect(r?.result.result.is_valid).toBe(false);
  });

  it('never throws on arbitrary JSON subjects, for every operator', () => {
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const leaf = (): unknown => [null, true, false, 0, -1, 18, 1e308, 20070601, '', '18', 'GREEN', '2001-02-03',
      '2001-02-03T04:05:06Z', '__proto__', [], {}][Math.floor(rand() * 16)];
    const json = (depth: number): unknown => {
      if (depth <= 0 || rand() < 0.3) return leaf();
      if (rand() < 0.5) return Array.from({ length: Math.floor(rand() * 4) }, () => json(depth - 1));
      const o: Record<string, unknown> = {};
      for (const k of ['a', 'b', '0', 'constructor']) if (rand() < 0.5) o[k] = json(depth - 1);
      return o;
    };
    const queries: Query[] = [
      ['$eq', 18], ['$eq', 'GREEN'], ['$eq', true], ['$eq', ['a', 1]], ['$ne', 18], ['$ne', ['2001-02-03']],
      ['$lt', 18], ['$lte', '2001-02-03'], ['$gt', 0], ['$gte', '2001-02-03T04:05:06Z'], ['$in', ['GREEN', 18, '2001-02-03']],
      ['$nin', [18]], ['$exists', true], ['$exists', false], ['$between', [0, 100]], ['$nonbetween', ['2000-01-01', '2002-01-01']],
    ].flatMap(([operator, value]) => ['a', 'a.b', 'b.0.a', '0', 'constructor.a'].map((attribute) =>
      ({ type: 'IDInformation', attribute, operator, value }) as Query));
    queries.push({ type: 'IDInformation', operator: '$noop' });
    const plan = compilePlan('s', 1, scenario(queries), TYPES);
    for (let i = 0; i < 300; i++) {
      const subject = json(4);
      const credentials = [credential(`urn:uuid:${i}`, (typeof subject === 'object' && subject !== null && !Array.isArray(subject)
        ? subject
        : { a: subject }) as Record<string, unknown>)];
      const results = run(plan, credentials);
      expect(results).toHaveLength(queries.length);
      for (const r of results) {
        expect(['valid', 'not-valid']).toContain(r.result.status);
        expect(r.result.result.is_valid).toBe(r.result.status === 'valid');
        expect(r.result.result.reasons.length === 0).toBe(r.result.status === 'valid');
        // The failure path (closures) would say this of a credential the fast path (generated code) had failed.
        expect(r.result.result.reasons.filter((x) => x.endsWith('satisfies the query'))).toEqual([]);
      }
    }
  });

  it('skips malformed credentials (no type array) without throwing', () => {
    const weird = [{ ...adult('urn:uuid:w'), type: 'IDInformation' }, null] as unknown as Credential[];
    const [r] = run(compilePlan('s', 1, scenario([age18]), TYPES), weird);
    expect(r?.result.status).toBe('not-valid');
  });
});
