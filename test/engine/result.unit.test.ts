import { describe, expect, it } from 'vitest';
import { MAX_RESULTS_BYTES, executionResult, failed, withVerdict } from '../../src/engine/result.js';
import { compactResults } from '../../src/execution/registry.js';
import { VALUE_QUOTE_BYTES, echoQuery, frozenQuery, quoteValue } from '../../src/engine/query.js';
import type { Query } from '../../src/schemas/scenario.js';

const head = { objectType: 'OffChainZKP' as const, name: 'n', scenarioId: 's', address: 'a', executionId: 'e' };
const list = (n: number) => Array.from({ length: n }, (_, i) => `value-${i}`);
const inQuery = (value: string[]): Query => ({ type: 'T', requestId: 1, attribute: 'x', value, operator: '$in' });

describe('the query a result echoes', () => {
  it('is the query itself while its value takes at most 128 bytes of JSON', () => {
    const q = inQuery(['FRA', 'DEU']);
    expect(echoQuery(q)).toBe(q);
  });

  it('keeps the first values that fit in 128 bytes of a longer list, with valueCount, in the query\'s field order', () => {
    const echo = echoQuery(inQuery(list(256)));
    expect(Object.keys(echo)).toEqual(['type', 'requestId', 'attribute', 'value', 'valueCount', 'operator']);
    expect(echo.valueCount).toBe(256);
    const kept = echo.value as string[];
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(VALUE_QUOTE_BYTES);
    expect(Buffer.byteLength(JSON.stringify(list(kept.length + 1)))).toBeGreaterThan(VALUE_QUOTE_BYTES);
    expect(kept).toEqual(list(kept.length));
    // A compiled rule's query is its echo, and an echo echoes as itself: a result rebuilt with a new verdict keeps valueCount.
    expect(frozenQuery(inQuery(list(256)))).toEqual(echo);
    expect(echoQuery(echo)).toBe(echo);
    const r = executionResult(head, { id: 'q', query: frozenQuery(inQuery(list(256))) }, 'pending', failed(['p']));
    expect(r.result.query).toEqual(echo);
    expect(withVerdict(r, 'valid', { is_valid: true, reasons: [] }).result.query).toEqual(echo);
  });

  it('is quoted in reasons only when short', () => {
    expect(quoteValue(['FRA', 'DEU'])).toBe('["FRA","DEU"]');
    expect(quoteValue(18)).toBe('18');
    expect(quoteValue(list(256))).toBe('(a list of 256 values)');
    expect(quoteValue('z'.repeat(200))).toBe('(a string of 200 characters)');
  });
});

describe('compactResults', () => {
  it('keeps the first line of each result\'s reasons and the authorization request on the first result only', () => {
    const request = { thid: 't', body: { scope: [] } };
    const results = [0, 1, 2].map((i) => executionResult(head, { id: `q${i}`, query: inQuery(['A']) }, 'not-valid', failed(['rule', 'a', 'b', 'c']), { authorizationRequest: request }));
    const short = executionResult(head, { id: 'q3', query: inQuery(['A']) }, 'not-valid', failed(['rule', 'why']));
    const compacted = compactResults([...results, short]);
    expect(compacted.map((r) => r.result.authorizationRequest)).toEqual([request, undefined, undefined, undefined]);
    expect(compacted[1]!.result.result.reasons).toEqual(['rule', `3 more reasons not listed: this execution's results were over ${MAX_RESULTS_BYTES} bytes (send fewer credentials to see them)`]);
    expect(compacted[3]).toBe(short);
    expect(compacted[0]!.result).toMatchObject({ executionId: 'e', status: 'not-valid', query: inQuery(['A']) });
  });
});
