import { describe, it, expect } from 'vitest';
import type { FieldProblem } from '../../src/engine/index.js';
import { validateScenarioRules } from '../../src/execution/registry.js';
import type { Query, Scenario, ScenarioType } from '../../src/schemas/scenario.js';

function scenario(queries: Query[], type: ScenarioType = 'ChallengeQuery', ids?: string[]): Scenario {
  return {
    name: 'S',
    type,
    smartContractDeployments: [],
    queryConfigurations: queries.map((query, i) => ({ id: ids?.[i] ?? `q${i}`, query })),
  };
}

const q = (operator: string, value?: unknown, extra: Record<string, unknown> = {}): Query =>
  ({ type: 'IDInformation', attribute: 'personalData.age', operator, ...(value === undefined ? {} : { value }), ...extra }) as Query;

/** The problems of a one-rule scenario. */
const problems = (query: Query, type: ScenarioType = 'ChallengeQuery'): FieldProblem[] => validateScenarioRules(scenario([query], type));

const VALUE = '/queryConfigurations/0/query/value';

describe('validateScenarioRules: accepted scenarios', () => {
  it('accepts the contract example and every operator with a well-shaped value', () => {
    const ok: Query[] = [
      { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' },
      { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gte' },
      { type: 'IDInformation', operator: '$noop' },
      { type: 'IDInformation', operator: '$noop', value: true },
      q('$eq', true), q('$eq', ['a', 1]), q('$eq', []), q('$ne', 'RED'), q('$ne', [1, 2]),
      q('$lt', 18), q('$lte', '2001-02-03'), q('$gt', '2001-02-03T04:05:06+02:00'), q('$gte', 20070601),
      q('$in', ['FRA']), q('$nin', [840, 'FRA']), q('$exists', true), q('$exists', false),
      q('$between', [18, 65]), q('$between', [5, 5]), q('$nonbetween', ['2001-01-01', '2001-12-31T23:59:59Z']),
    ];
    expect(validateScenarioRules(scenario(ok))).toEqual([]);
  });

  it('accepts a scenario without query configurations', () => {
    expect(validateScenarioRules(scenario([]))).toEqual([]);
  });

  it('does not require requestId, nor refuse $lte/$gte or long $in lists, in ChallengeQuery scenarios', () => {
    const long = Array.from({ length: 200 }, (_, i) => i);
    expect(validateScenarioRules(scenario([q('$lte', 1), q('$gte', 1), q('$in', long)]))).toEqual([]);
  });
});

describe('validateScenarioRules: attribute and value presence', () => {
  it('requires attribute for every operator but $noop', () => {
    for (const op of ['$eq', '$ne', '$lt', '$lte', '$gt', '$gte', '$in', '$nin', '$exists', '$between', '$nonbetween']) {
      const value = op === '$exists' ? true : ['$in', '$nin', '$between', '$nonbetween'].includes(op) ? [1, 2] : 1;
      expect(problems({ type: 'IDInformation', operator: op, value } as Query), op).toEqual([{
        pointer: '/queryConfigurations/0/query/attribute',
        message: `attribute is required for operator ${op}: a dot path inside credentialSubject (e.g. personalData.age)`,
      }]);
    }
    expect(problems({ type: 'IDInformation', operator: '$noop' })).toEqual([]);
  });

  it('requires value for every operator but $noop', () => {
    for (const op of ['$eq', '$ne', '$lt', '$lte', '$gt', '$gte', '$in', '$nin', '$exists', '$between', '$nonbetween']) {
      expect(problems(q(op)), op).toEqual([{ pointer: VALUE, message: `value is required for operator ${op}` }]);
    }
  });

  it('reports both a missing attribute and a missing value', () => {
    expect(problems({ type: 'IDInformation', operator: '$eq' }).map((p) => p.pointer)).toEqual([
      '/queryConfigurations/0/query/attribute', VALUE,
    ]);
  });

  it('refuses an attribute path with an empty segment', () => {
    for (const attribute of ['', '.a', 'a.', 'a..b']) {
      expect(problems({ type: 'IDInformation', attribute, operator: '$eq', value: 1 }), attribute)
        .toEqual([expect.objectContaining({ pointer: '/queryConfigurations/0/query/attribute' })]);
    }
  });

  it('refuses an unknown operator', () => {
    expect(problems(q('$like', 'x'))).toEqual([{
      pointer: '/queryConfigurations/0/query/operator',
      message: expect.stringMatching(/^operator must be one of \$noop, \$eq/),
    }]);
  });
});

describe('validateScenarioRules: value shape per operator', () => {
  it('$eq/$ne: refuse objects, null and arrays holding booleans, objects or nested arrays', () => {
    expect(problems(q('$eq', { a: 1 }))).toEqual([{ pointer: VALUE, message: 'value for $eq must be a string, a number, a boolean, or an array of strings and numbers; got an object' }]);
    expect(problems(q('$ne', null))).toEqual([{ pointer: VALUE, message: 'value for $ne must be a string, a number, a boolean, or an array of strings and numbers; got null' }]);
    expect(problems(q('$eq', ['a', true, [1]]))).toEqual([
      { pointer: `${VALUE}/1`, message: 'each element of an array value for $eq must be a string or a number; got a boolean' },
      { pointer: `${VALUE}/2`, message: 'each element of an array value for $eq must be a string or a number; got an array' },
    ]);
  });

  it('$lt/$lte/$gt/$gte: refuse a boolean, a non-date string, an array and a non-finite number', () => {
    const msg = (op: string, got: string) =>
      `value for ${op} must be a number or an ISO 8601 date (e.g. 2001-02-03, 2001-02-03T04:05:06Z or 2001-02-03T04:05:06.789+02:00); got ${got}`;
    expect(problems(q('$lt', true))).toEqual([{ pointer: VALUE, message: msg('$lt', 'a boolean') }]);
    expect(problems(q('$lte', 'eighteen'))).toEqual([{ pointer: VALUE, message: msg('$lte', 'a string that is not an ISO 8601 date') }]);
    expect(problems(q('$gt', '18'))).toEqual([{ pointer: VALUE, message: msg('$gt', 'a string that is not an ISO 8601 date') }]);
    expect(problems(q('$gte', [18]))).toEqual([{ pointer: VALUE, message: msg('$gte', 'an array') }]);
    expect(problems(q('$gte', '2001-02-03T04:05:06'))).toEqual([{ pointer: VALUE, message: msg('$gte', 'a string that is not an ISO 8601 date') }]);
    expect(problems(q('$gt', Infinity))).toEqual([{ pointer: VALUE, message: msg('$gt', 'a non-finite number') }]);
  });

  it('$in/$nin: refuse a scalar, an empty array and elements that are not strings or numbers', () => {
    // A string is just a string where the operator takes no dates: not "a string that is not an ISO 8601 date".
    expect(problems(q('$in', 'FRA'))).toEqual([{
      pointer: VALUE, message: 'value for $in must be a non-empty array of strings and numbers; got a string (one value is written as a one-element array: ["FRA"])',
    }]);
    expect(problems(q('$nin', 7))).toEqual([{
      pointer: VALUE, message: 'value for $nin must be a non-empty array of strings and numbers; got a number (one value is written as a one-element array: [7])',
    }]);
    expect(problems(q('$in', true))[0]!.message).toBe('value for $in must be a non-empty array of strings and numbers; got a boolean');
    expect(problems(q('$eq', [true]))[0]!.message).toMatch(/got a boolean$/);
    expect(problems(q('$nin', []))).toEqual([{ pointer: VALUE, message: 'value for $nin must be a non-empty array of strings and numbers; got an empty array' }]);
    expect(problems(q('$in', ['FRA', false]))).toEqual([{ pointer: `${VALUE}/1`, message: 'each element of the value for $in must be a string or a number; got a boolean' }]);
  });

  it('$exists: refuses anything but a boolean', () => {
    for (const value of ['true', 1, [true]]) {
      expect(problems(q('$exists', value)), JSON.stringify(value)).toEqual([{
        pointer: VALUE,
        message: expect.stringMatching(/^value for \$exists must be a boolean \(true: the attribute is present, false: it is absent\); got /),
      }]);
    }
  });

  it('$between/$nonbetween: refuse anything but [min, max] of two numbers or two ISO dates', () => {
    const shape = (op: string) => `value for ${op} must be [min, max]: an array of exactly two numbers or two ISO 8601 dates`;
    expect(problems(q('$between', 18))).toEqual([{ pointer: VALUE, message: `${shape('$between')}; got a number` }]);
    expect(problems(q('$between', [18]))).toEqual([{ pointer: VALUE, message: `${shape('$between')}; got an array of 1` }]);
    expect(problems(q('$nonbetween', [1, 2, 3]))).toEqual([{ pointer: VALUE, message: `${shape('$nonbetween')}; got an array of 3` }]);
    expect(problems(q('$between', [18, '2001-01-01']))).toEqual([{ pointer: VALUE, message: `${shape('$between')}; got a number and an ISO 8601 date` }]);
    expect(problems(q('$between', ['a', 'b']))).toEqual([{
      pointer: VALUE, message: `${shape('$between')}; got a string that is not an ISO 8601 date and a string that is not an ISO 8601 date`,
    }]);
  });

  it('$between/$nonbetween: refuse min > max, for numbers and dates', () => {
    expect(problems(q('$between', [65, 18]))).toEqual([{ pointer: VALUE, message: 'value for $between must have min <= max; got min 65 and max 18' }]);
    expect(problems(q('$nonbetween', ['2002-01-01', '2001-12-31T23:59:59+01:00']))).toEqual([{
      pointer: VALUE, message: 'value for $nonbetween must have min <= max; got min 2002-01-01 after max 2001-12-31T23:59:59+01:00',
    }]);
    // Same instant written two ways: min == max is fine.
    expect(problems(q('$between', ['2002-01-01', '2002-01-01T01:00:00+01:00']))).toEqual([]);
  });
});

describe('validateScenarioRules: ids', () => {
  it('refuses a duplicate query configuration id, pointing at the duplicate\'s /id', () => {
    const s = scenario([q('$gte', 18), q('$lt', 65), q('$eq', 30)], 'ChallengeQuery', ['age', 'other', 'age']);
    expect(validateScenarioRules(s)).toEqual([{
      pointer: '/queryConfigurations/2/id',
      message: 'duplicate query configuration id "age" (first used by /queryConfigurations/0)',
    }]);
  });

  it('reports problems of several query configurations with their own pointers', () => {
    const s = scenario([q('$gte', 18), q('$gte', true), q('$in', [])]);
    expect(validateScenarioRules(s).map((p) => p.pointer)).toEqual([
      '/queryConfigurations/1/query/value', '/queryConfigurations/2/query/value',
    ]);
  });
});

describe('validateScenarioRules: zero-knowledge proof scenarios', () => {
  for (const type of ['OffChainZKP', 'OnChainZKP'] as const) {
    it(`${type}: refuses $lte and $gte where the circuits lack them (OffChainZKP: zkp/queries.ts decides per circuit)`, () => {
      if (type === 'OffChainZKP') {
        expect(problems(q('$lte', 18, { requestId: 1 }), type)).toEqual([]);
        return;
      }
      expect(problems(q('$lte', 18, { requestId: 1 }), type)).toEqual([{
        pointer: '/queryConfigurations/0/query/operator',
        message: `$lte is not available in ${type} scenarios (the iden3 V2 circuits lack it); use $lt with an adjusted value, ` +
          'or circuitId credentialAtomicQueryV3 for a V3 request',
      }]);
      expect(problems(q('$gte', 18, { requestId: 1 }), type)).toEqual([{
        pointer: '/queryConfigurations/0/query/operator',
        message: `$gte is not available in ${type} scenarios (the iden3 V2 circuits lack it); use $gt with an adjusted value, ` +
          'or circuitId credentialAtomicQueryV3 for a V3 request',
      }]);
      // A rule on a V3 request (a current UniversalVerifier's) names its circuit: then they can be asked.
      for (const circuitId of ['credentialAtomicQueryV3', 'linkedMultiQuery']) {
        expect(problems(q('$lte', 18, { requestId: 1, circuitId }), type)).toEqual([]);
        expect(problems(q('$gte', 18, { requestId: 1, circuitId }), type)).toEqual([]);
      }
      expect(problems(q('$lte', 18, { requestId: 1, circuitId: 'credentialAtomicQuerySigV2' }), type)).toHaveLength(1);
    });

    it(`${type}: limits $in/$nin to 64 values`, () => {
      const v = (n: number) => Array.from({ length: n }, (_, i) => i);
      expect(problems(q('$in', v(64), { requestId: 1 }), type)).toEqual([]);
      expect(problems(q('$nin', v(65), { requestId: 1 }), type)).toEqual([{
        pointer: VALUE,
        message: `value for $nin may hold at most 64 values in ${type} scenarios (the limit of the iden3 circuits); got 65`,
      }]);
    });

    it(`${type}: requires requestId, also for $noop`, () => {
      expect(problems(q('$gt', 18), type)).toEqual([{
        pointer: '/queryConfigurations/0/query/requestId',
        message: `requestId is required in ${type} scenarios (the zero-knowledge proof request number)`,
      }]);
      expect(problems({ type: 'IDInformation', operator: '$noop' }, type).map((p) => p.pointer)).toEqual([
        '/queryConfigurations/0/query/requestId',
      ]);
    });

    it(`${type}: requires requestId unique within the scenario, pointing at the duplicate (OffChainZKP: zkp/query-groups.ts)`, () => {
      const s = scenario([q('$gt', 18, { requestId: 7 }), q('$lt', 65, { requestId: 8 }), q('$eq', 30, { requestId: 7 })], type);
      if (type === 'OffChainZKP') {
        expect(validateScenarioRules(s)).toEqual([]);
        return;
      }
      expect(validateScenarioRules(s)).toEqual([{
        pointer: '/queryConfigurations/2/query/requestId',
        message: 'duplicate requestId 7 (first used by /queryConfigurations/0); each zero-knowledge proof request needs its own',
      }]);
    });

    it(`${type}: still applies the value shape checks`, () => {
      expect(problems(q('$gt', 'x', { requestId: 1 }), type).map((p) => p.pointer)).toEqual([VALUE]);
    });
  }

  it('refuses $sd (selective disclosure) but in OffChainZKP scenarios and OnChainZKP rules on a V3 request', () => {
    expect(problems(q('$sd', undefined), 'ChallengeQuery')[0]?.pointer).toBe('/queryConfigurations/0/query/operator');
    expect(problems(q('$sd', undefined, { requestId: 1 }), 'OnChainZKP')[0]?.message).toMatch(/only OffChainZKP .*OnChainZKP: with circuitId credentialAtomicQueryV3/);
    // OnChainZKP names a V3 request that discloses on chain; still, the attribute is required and no value given.
    expect(problems(q('$sd', undefined, { requestId: 1, circuitId: 'credentialAtomicQueryV3' }), 'OnChainZKP')).toEqual([]);
    expect(problems(q('$sd', 3, { circuitId: 'credentialAtomicQueryV3' }), 'OnChainZKP').map((p) => p.pointer))
      .toEqual(['/queryConfigurations/0/query/requestId', '/queryConfigurations/0/query/value']);
    expect(problems(q('$sd', undefined, { requestId: 1 }), 'OffChainZKP')).toEqual([]);
    expect(problems(q('$sd', 3, { requestId: 1 }), 'OffChainZKP')[0]?.pointer).toBe('/queryConfigurations/0/query/value');
  });

  it('does not require requestId to be unique in ChallengeQuery scenarios', () => {
    expect(validateScenarioRules(scenario([q('$gt', 1, { requestId: 1 }), q('$lt', 9, { requestId: 1 })]))).toEqual([]);
  });
});

describe('validateScenarioRules: defensive shapes', () => {
  it('reports instead of throwing on shapes the schema should have refused', () => {
    const weird = {
      name: 'S', type: 'Other', smartContractDeployments: [],
      queryConfigurations: [null, { id: 5, query: 'x' }],
    } as unknown as Scenario;
    expect(validateScenarioRules(weird).map((p) => p.pointer)).toEqual([
      '/type', '/queryConfigurations/0', '/queryConfigurations/1/id', '/queryConfigurations/1/query',
    ]);
    expect(validateScenarioRules({ name: 'S', type: 'ChallengeQuery' } as unknown as Scenario)).toEqual([
      { pointer: '/queryConfigurations', message: 'queryConfigurations must be an array' },
    ]);
  });
});
