/**
 * The query language's operators through a one-rule plan, one describe per operator. Over 300 lines: it is the
 * operator table, read as one.
 */
import { describe, it, expect } from 'vitest';
import { compilePlan } from '../../src/engine/index.js';
import { runBoth } from './dry-run.js';
import type { Credential } from '../../src/schemas/credential.js';
import { NOW, TYPES, credential as base } from './factories.js';
import type { Operator, Query, QueryValue } from '../../src/schemas/scenario.js';

let seq = 0;
function credential(credentialSubject: Record<string, unknown>, over: Partial<Credential> = {}): Credential {
  seq += 1;
  return base(`urn:uuid:00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`, credentialSubject, over);
}

/** Runs one ChallengeQuery rule against one credential holding `subject`. */
function check(operator: Operator, value: QueryValue | undefined, subject: Record<string, unknown>, attribute = 'x') {
  const query: Query = { type: 'IDInformation', attribute, operator };
  if (value !== undefined) query.value = value;
  const plan = compilePlan('s1', 1, {
    name: 'op test', type: 'ChallengeQuery', smartContractDeployments: [], queryConfigurations: [{ id: 'q', query }],
  }, TYPES);
  const [r] = runBoth(plan, { address: '0x0', credentials: [credential(subject)], now: NOW, executionId: 'e' });
  if (r === undefined) throw new Error('one rule, one result');
  return { status: r.result.status, reasons: r.result.result.reasons, isValid: r.result.result.is_valid };
}

const status = (operator: Operator, value: QueryValue | undefined, subject: Record<string, unknown>, attribute = 'x') =>
  check(operator, value, subject, attribute).status;

/** The reason line about the (single) credential, without the "credential #1 (id): " prefix. */
const why = (operator: Operator, value: QueryValue | undefined, subject: Record<string, unknown>, attribute = 'x') => {
  const r = check(operator, value, subject, attribute);
  expect(r.status).toBe('not-valid');
  return (r.reasons[1] ?? '').replace(/^credential #1 \([^)]*\): /, '');
};

describe('$noop', () => {
  it('passes with any usable credential of the type, ignoring attribute and value', () => {
    expect(status('$noop', undefined, {})).toBe('valid');
    expect(status('$noop', 42, { x: 1 }, 'does.not.exist')).toBe('valid');
  });
});

describe('$eq', () => {
  it('passes on an equal number and fails on a different one', () => {
    expect(status('$eq', 30, { x: 30 })).toBe('valid');
    expect(why('$eq', 30, { x: 31 })).toBe('x is not $eq 30');
  });

  it('never coerces: "30" does not equal 30, either way round (type mismatch)', () => {
    expect(why('$eq', 30, { x: '30' })).toMatch(/^type mismatch: x is a string, expected a number$/);
    expect(why('$eq', '30', { x: 30 })).toMatch(/^type mismatch: x is a number, expected a string$/);
  });

  it('compares strings exactly (case-sensitive)', () => {
    expect(status('$eq', 'GREEN', { x: 'GREEN' })).toBe('valid');
    expect(why('$eq', 'GREEN', { x: 'green' })).toBe('x is not $eq "GREEN"');
  });

  it('compares booleans only with booleans', () => {
    expect(status('$eq', true, { x: true })).toBe('valid');
    expect(status('$eq', false, { x: false })).toBe('valid');
    expect(why('$eq', true, { x: false })).toBe('x is not $eq true');
    expect(why('$eq', true, { x: 'true' })).toMatch(/^type mismatch: x is a string, expected a boolean$/);
    expect(why('$eq', true, { x: 1 })).toMatch(/^type mismatch: x is a number, expected a boolean$/);
    expect(why('$eq', 1, { x: true })).toMatch(/^type mismatch/);
  });

  it('compares ISO dates as instants across offsets and date-only forms', () => {
    expect(status('$eq', '2001-02-03T04:05:06Z', { x: '2001-02-03T06:05:06+02:00' })).toBe('valid');
    expect(status('$eq', '2001-02-03', { x: '2001-02-03T00:00:00.000Z' })).toBe('valid');
    expect(status('$eq', '2001-02-03', { x: '2001-02-03' })).toBe('valid');
    expect(status('$eq', '2001-02-03', { x: '2001-02-03T00:00:01Z' })).toBe('not-valid');
  });

  it('answers an ISO date value against a non-date string as simply not equal', () => {
    expect(why('$eq', '2001-02-03', { x: 'GREEN' })).toBe('x is not $eq "2001-02-03"');
  });

  it('compares arrays element-wise: same length, same order', () => {
    expect(status('$eq', ['a', 1], { x: ['a', 1] })).toBe('valid');
    expect(why('$eq', ['a', 1], { x: [1, 'a'] })).toMatch(/^type mismatch/); // pairs of different kinds
    expect(why('$eq', ['a', 'b'], { x: ['b', 'a'] })).toBe('x is not $eq ["a","b"]');
    expect(why('$eq', ['a', 'b'], { x: ['a', 'b', 'c'] })).toBe('x is not $eq ["a","b"]');
    expect(why('$eq', ['a', 'b'], { x: ['a'] })).toBe('x is not $eq ["a","b"]');
    expect(status('$eq', [], { x: [] })).toBe('valid');
  });

  it('treats an array element of another kind as a type mismatch, not inequality', () => {
    expect(why('$eq', [30], { x: ['30'] })).toMatch(/^type mismatch: x is an array, expected an array$/);
    expect(why('$eq', [30], { x: [null] })).toMatch(/^type mismatch/);
  });

  it('compares ISO dates inside arrays as instants', () => {
    expect(status('$eq', ['2001-02-03'], { x: ['2001-02-03T01:00:00+01:00'] })).toBe('valid');
  });

  it('does not match a scalar value with an array attribute, nor an array value with a scalar', () => {
    expect(why('$eq', 'USA', { x: ['USA'] })).toMatch(/^type mismatch: x is an array, expected a string$/);
    expect(why('$eq', ['USA'], { x: 'USA' })).toMatch(/^type mismatch: x is a string, expected an array$/);
  });

  it('fails on a missing or null attribute', () => {
    expect(why('$eq', 1, {})).toBe('x is missing');
    expect(why('$eq', 1, { x: null })).toBe('x is missing');
  });
});

describe('$ne', () => {
  it('passes on a different value of the same type and fails on an equal one', () => {
    expect(status('$ne', 'RED', { x: 'GREEN' })).toBe('valid');
    expect(status('$ne', 30, { x: 31 })).toBe('valid');
    expect(status('$ne', true, { x: false })).toBe('valid');
    expect(why('$ne', 'RED', { x: 'RED' })).toBe('x is not $ne "RED"');
  });

  it('fails on a type mismatch instead of passing ("30" is not judged different from 30)', () => {
    expect(why('$ne', 30, { x: '30' })).toMatch(/^type mismatch: x is a string, expected a number$/);
    expect(why('$ne', 'RED', { x: { colour: 'RED' } })).toMatch(/^type mismatch: x is an object, expected a string$/);
  });

  it('fails on a missing attribute with the reason "missing"', () => {
    expect(why('$ne', 'RED', {})).toBe('x is missing');
    expect(why('$ne', 'RED', { x: null })).toBe('x is missing');
  });

  it('compares arrays element-wise', () => {
    expect(status('$ne', ['a', 'b'], { x: ['b', 'a'] })).toBe('valid');
    expect(status('$ne', ['a'], { x: ['a', 'b'] })).toBe('valid');
    expect(why('$ne', ['a', 'b'], { x: ['a', 'b'] })).toBe('x is not $ne ["a","b"]');
    expect(why('$ne', ['a'], { x: 'b' })).toMatch(/^type mismatch/);
  });

  it('treats ISO dates naming the same instant as equal', () => {
    expect(why('$ne', '2001-02-03T04:05:06Z', { x: '2001-02-03T05:05:06+01:00' })).toMatch(/is not \$ne/);
  });
});

describe('$lt $lte $gt $gte on numbers', () => {
  it('decides the boundary: equal fails $lt/$gt and passes $lte/$gte', () => {
    expect(status('$lt', 18, { x: 18 })).toBe('not-valid');
    expect(status('$lte', 18, { x: 18 })).toBe('valid');
    expect(status('$gt', 18, { x: 18 })).toBe('not-valid');
    expect(status('$gte', 18, { x: 18 })).toBe('valid');
  });

  it('passes and fails either side of the boundary', () => {
    expect(status('$lt', 18, { x: 17 })).toBe('valid');
    expect(status('$lt', 18, { x: 19 })).toBe('not-valid');
    expect(status('$lte', 18, { x: 19 })).toBe('not-valid');
    expect(status('$gt', 18, { x: 19 })).toBe('valid');
    expect(status('$gt', 18, { x: 17 })).toBe('not-valid');
    expect(status('$gte', 18, { x: 17.999 })).toBe('not-valid');
    expect(status('$gte', -1.5, { x: -1.5 })).toBe('valid');
  });

  it('says "is not $gte 18" without the holder\'s value', () => {
    expect(why('$gte', 18, { x: 17 }, 'x')).toBe('x is not $gte 18');
  });

  it('compares yyyymmdd integers as integers', () => {
    expect(status('$lte', 20070601, { birthDate: 20070601 }, 'birthDate')).toBe('valid');
    expect(status('$lte', 20070601, { birthDate: 20070602 }, 'birthDate')).toBe('not-valid');
    expect(status('$lt', 20070601, { birthDate: 19991231 }, 'birthDate')).toBe('valid');
  });

  it('handles huge numbers without throwing', () => {
    expect(status('$gt', 1e300, { x: JSON.parse('1e400') as number })).toBe('valid'); // Infinity
    expect(status('$lt', 0, { x: -Number.MAX_VALUE })).toBe('valid');
    // JSON numbers are doubles: integers beyond 2^53 compare as the double they parse to.
    expect(status('$eq', 9007199254740992, { x: JSON.parse('9007199254740993') as number })).toBe('valid');
  });

  it('fails on a string, boolean, array or object attribute (type mismatch)', () => {
    expect(why('$gte', 18, { x: '30' })).toBe('type mismatch: x is a string, expected a number');
    expect(why('$gte', 18, { x: true })).toBe('type mismatch: x is a boolean, expected a number');
    expect(why('$gte', 18, { x: [30] })).toBe('type mismatch: x is an array, expected a number');
    expect(why('$gte', 18, { x: { v: 30 } })).toBe('type mismatch: x is an object, expected a number');
  });

  it('does not compare a number value with an ISO date attribute', () => {
    expect(why('$lt', 20070601, { x: '2001-02-03' })).toMatch(/^type mismatch: x is a string, expected a number$/);
  });
});

describe('$lt $lte $gt $gte on ISO dates', () => {
  it('compares instants across offsets', () => {
    // 2001-02-03T05:00:00+02:00 is 03:00Z, before 04:00Z
    expect(status('$lt', '2001-02-03T04:00:00Z', { x: '2001-02-03T05:00:00+02:00' })).toBe('valid');
    expect(status('$gt', '2001-02-03T04:00:00Z', { x: '2001-02-03T05:00:00+02:00' })).toBe('not-valid');
  });

  it('decides the boundary at the same instant written differently', () => {
    const value = '2001-02-03T04:00:00Z';
    const same = { x: '2001-02-03T06:00:00.000+02:00' };
    expect(status('$lt', value, same)).toBe('not-valid');
    expect(status('$lte', value, same)).toBe('valid');
    expect(status('$gt', value, same)).toBe('not-valid');
    expect(status('$gte', value, same)).toBe('valid');
  });

  it('compares a date-only value with a date-time attribute (date-only = midnight UTC)', () => {
    expect(status('$gte', '2001-02-03', { x: '2001-02-03T00:00:00Z' })).toBe('valid');
    expect(status('$gt', '2001-02-03', { x: '2001-02-03T00:00:00.001Z' })).toBe('valid');
    expect(status('$lt', '2001-02-03', { x: '2001-02-02T23:59:59.999Z' })).toBe('valid');
  });

  it('compares fractions of a second', () => {
    expect(status('$gt', '2001-02-03T04:05:06.123Z', { x: '2001-02-03T04:05:06.124Z' })).toBe('valid');
    expect(status('$gt', '2001-02-03T04:05:06.123Z', { x: '2001-02-03T04:05:06.123Z' })).toBe('not-valid');
  });

  it('fails on a non-date string, a zone-less date-time or a yyyymmdd number (type mismatch)', () => {
    expect(why('$gte', '2001-02-03', { x: 'yesterday' })).toBe(
      'type mismatch: x is a string that is not an ISO 8601 date, expected an ISO 8601 date (YYYY-MM-DD or a date-time with a time zone)');
    expect(why('$gte', '2001-02-03', { x: '2001-02-03T04:05:06' })).toMatch(/^type mismatch: x is a string that is not an ISO 8601 date/);
    expect(why('$gte', '2001-02-03', { x: 20010203 })).toMatch(/^type mismatch: x is a number, expected an ISO 8601 date/);
  });
});

describe('$in and $nin', () => {
  it('$in passes when a string or number attribute is in the list', () => {
    expect(status('$in', ['FRA', 'DEU'], { x: 'DEU' })).toBe('valid');
    expect(status('$in', [840, 250], { x: 250 })).toBe('valid');
    expect(why('$in', ['FRA', 'DEU'], { x: 'ITA' })).toBe('x is not $in ["FRA","DEU"]');
  });

  it('$nin passes when the attribute is not in the list and fails when it is', () => {
    expect(status('$nin', ['PRK', 'IRN'], { x: 'FRA' })).toBe('valid');
    expect(why('$nin', ['PRK', 'IRN'], { x: 'IRN' })).toBe('x is not $nin ["PRK","IRN"]');
  });

  it('never lets a number match a string: "840" is a type mismatch for a list of numbers, for $in and $nin', () => {
    expect(why('$in', [840, 120], { x: '840' })).toBe('type mismatch: x is a string, expected a number or an array of numbers');
    expect(why('$nin', [840, 120], { x: '840' })).toBe('type mismatch: x is a string, expected a number or an array of numbers');
    expect(why('$nin', ['840'], { x: 840 })).toBe('type mismatch: x is a number, expected a string or an array of strings');
  });

  it('keeps numbers and strings apart in a mixed list', () => {
    expect(status('$in', [30, 'forty'], { x: 30 })).toBe('valid');
    expect(status('$in', [30, 'forty'], { x: 'forty' })).toBe('valid');
    expect(status('$in', [30, 'forty'], { x: '30' })).toBe('not-valid');
    expect(status('$nin', [30, 'forty'], { x: '30' })).toBe('valid');
  });

  it('fails on a boolean, object or missing attribute, for $in and $nin alike', () => {
    expect(why('$in', ['a'], { x: true })).toMatch(/^type mismatch: x is a boolean/);
    expect(why('$nin', ['a'], { x: true })).toMatch(/^type mismatch: x is a boolean/);
    expect(why('$nin', ['a'], { x: { a: 1 } })).toMatch(/^type mismatch: x is an object/);
    expect(why('$nin', ['a'], {})).toBe('x is missing');
    expect(why('$in', ['a'], { x: null })).toBe('x is missing');
  });

  it('with an array attribute: $in when any element is in the list, $nin when none is', () => {
    expect(status('$in', ['FRA', 'DEU'], { x: ['ITA', 'DEU'] })).toBe('valid');
    expect(status('$in', ['FRA', 'DEU'], { x: ['ITA', 'ESP'] })).toBe('not-valid');
    expect(status('$nin', ['FRA', 'DEU'], { x: ['ITA', 'ESP'] })).toBe('valid');
    expect(status('$nin', ['FRA', 'DEU'], { x: ['ITA', 'DEU'] })).toBe('not-valid');
  });

  it('with an empty array attribute: $in fails, $nin passes', () => {
    expect(why('$in', ['FRA'], { x: [] })).toBe('x is not $in ["FRA"]');
    expect(status('$nin', ['FRA'], { x: [] })).toBe('valid');
  });

  it('with an array attribute holding an element no list can hold: type mismatch for $in and $nin', () => {
    expect(why('$nin', ['FRA'], { x: ['ITA', { c: 'FRA' }] })).toMatch(/^type mismatch: x is an array/);
    expect(why('$in', ['FRA'], { x: ['FRA', null] })).toMatch(/^type mismatch: x is an array/);
    expect(why('$nin', [840], { x: ['840'] })).toMatch(/^type mismatch: x is an array/);
  });

  it('matches ISO dates in the list by instant', () => {
    expect(status('$in', ['2001-02-03', 'x'], { x: '2001-02-03T01:00:00+01:00' })).toBe('valid');
    expect(status('$nin', ['2001-02-03'], { x: '2001-02-03T00:00:00Z' })).toBe('not-valid');
    expect(status('$in', ['2001-02-03'], { x: 'not a date' })).toBe('not-valid');
  });
});

describe('$exists', () => {
  it('true passes when present, even when the value is falsy', () => {
    expect(status('$exists', true, { x: 'a' })).toBe('valid');
    expect(status('$exists', true, { x: 0 })).toBe('valid');
    expect(status('$exists', true, { x: false })).toBe('valid');
    expect(status('$exists', true, { x: '' })).toBe('valid');
    expect(status('$exists', true, { x: [] })).toBe('valid');
  });

  it('true fails when missing or null', () => {
    expect(why('$exists', true, {})).toBe('x is missing');
    expect(why('$exists', true, { x: null })).toBe('x is missing');
  });

  it('false passes when missing or null and fails when present', () => {
    expect(status('$exists', false, {})).toBe('valid');
    expect(status('$exists', false, { x: null })).toBe('valid');
    expect(why('$exists', false, { x: 'anything' })).toBe('x is present (expected $exists false)');
  });

  it('false still needs a usable credential of the type', () => {
    const plan = compilePlan('s', 1, {
      name: 'n', type: 'ChallengeQuery', smartContractDeployments: [],
      queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', attribute: 'x', operator: '$exists', value: false } }],
    }, TYPES);
    const [r] = runBoth(plan, { address: 'a', credentials: [], now: NOW, executionId: 'e' });
    expect(r?.result.status).toBe('not-valid');
  });
});

describe('$between and $nonbetween', () => {
  it('$between is inclusive at both bounds', () => {
    expect(status('$between', [18, 65], { x: 18 })).toBe('valid');
    expect(status('$between', [18, 65], { x: 65 })).toBe('valid');
    expect(status('$between', [18, 65], { x: 40 })).toBe('valid');
    expect(why('$between', [18, 65], { x: 17 })).toBe('x is not $between [18,65]');
    expect(status('$between', [18, 65], { x: 66 })).toBe('not-valid');
    expect(status('$between', [5, 5], { x: 5 })).toBe('valid');
  });

  it('$nonbetween fails at and inside the bounds and passes outside', () => {
    expect(status('$nonbetween', [18, 65], { x: 18 })).toBe('not-valid');
    expect(status('$nonbetween', [18, 65], { x: 65 })).toBe('not-valid');
    expect(status('$nonbetween', [18, 65], { x: 40 })).toBe('not-valid');
    expect(status('$nonbetween', [18, 65], { x: 17 })).toBe('valid');
    expect(status('$nonbetween', [18, 65], { x: 66 })).toBe('valid');
  });

  it('compares ISO dates as instants, inclusive', () => {
    const range = ['2001-01-01', '2001-12-31T23:59:59Z'];
    expect(status('$between', range, { x: '2001-01-01T00:00:00Z' })).toBe('valid');
    expect(status('$between', range, { x: '2002-01-01T00:59:59+01:00' })).toBe('valid'); // = 2001-12-31T23:59:59Z
    expect(status('$between', range, { x: '2002-01-01T01:00:00+01:00' })).toBe('not-valid');
    expect(status('$nonbetween', range, { x: '2000-12-31T23:59:59Z' })).toBe('valid');
  });

  it('compares yyyymmdd integers as integers', () => {
    expect(status('$between', [19500101, 20070601], { d: 20070601 }, 'd')).toBe('valid');
    expect(status('$between', [19500101, 20070601], { d: 20070602 }, 'd')).toBe('not-valid');
  });

  it('fails on a type mismatch for both operators', () => {
    expect(why('$between', [18, 65], { x: '40' })).toMatch(/^type mismatch: x is a string, expected a number$/);
    expect(why('$nonbetween', [18, 65], { x: '40' })).toMatch(/^type mismatch/);
    expect(why('$nonbetween', ['2001-01-01', '2002-01-01'], { x: 20010601 })).toMatch(/^type mismatch: x is a number/);
  });

  it('fails on a missing attribute for both operators', () => {
    expect(why('$between', [18, 65], {})).toBe('x is missing');
    expect(why('$nonbetween', [18, 65], {})).toBe('x is missing');
  });
});

describe('missing attributes', () => {
  const cases: [Operator, QueryValue][] = [
    ['$eq', 1], ['$ne', 1], ['$lt', 1], ['$lte', 1], ['$gt', 1], ['$gte', 1], ['$in', [1]], ['$nin', [1]],
    ['$exists', true], ['$between', [1, 2]], ['$nonbetween', [1, 2]],
  ];
  it.each(cases)('%s fails with "missing" when the attribute is absent', (op, value) => {
    expect(why(op, value, { other: 1 })).toBe('x is missing');
  });

  it('$exists false is the one operator that passes when the attribute is absent', () => {
    expect(status('$exists', false, { other: 1 })).toBe('valid');
  });
});
