/** console/revision-diff.js: what the Revisions page says changed between two revisions' inputs. */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a console module, plain JavaScript without declarations
import { diffInputs, shown, summarize } from '../console/revision-diff.js';

const rule = (id: string, value: unknown, extra: Record<string, unknown> = {}) =>
  ({ id, query: { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gte', value, ...extra } });

describe('the Revisions page\'s diff', () => {
  it('matches rules by id: added, removed, changed field by field, moved; the scenario\'s fields by name', () => {
    const before = { name: 'A', type: 'ChallengeQuery', trustedIssuers: ['did:x:1', 'did:x:2'], queryConfigurations: [rule('age', 18), rule('old', 1), rule('same', 5)] };
    const after = { name: 'B', type: 'ChallengeQuery', description: 'new', trustedIssuers: ['did:x:2', 'did:x:3'], queryConfigurations: [rule('same', 5), rule('age', 40, { operator: '$gt' }), rule('new', 2)] };
    const diff = diffInputs(before, after);
    expect(diff.fields).toEqual([
      { path: 'name', a: 'A', b: 'B', change: 'changed' },
      { path: 'trustedIssuers', a: before.trustedIssuers, b: after.trustedIssuers, change: 'changed', items: { added: ['did:x:3'], removed: ['did:x:1'] } },
      { path: 'description', a: undefined, b: 'new', change: 'added' },
    ]);
    expect(diff.rules.map((r: { id: string; change: string }) => [r.id, r.change])).toEqual([['age', 'changed'], ['old', 'removed'], ['same', 'changed'], ['new', 'added']]);
    expect(diff.rules[0].rows).toEqual([
      { path: 'query.operator', a: '$gte', b: '$gt', change: 'changed' },
      { path: 'query.value', a: 18, b: 40, change: 'changed' },
      { path: 'position', a: 1, b: 2, change: 'moved' },
    ]);
    expect(diff.rules[1].rows.every((r: { change: string; b: unknown }) => r.change === 'removed' && r.b === undefined)).toBe(true);
    expect(diff.rules[2].rows).toEqual([{ path: 'position', a: 3, b: 1, change: 'moved' }]);
    expect(diff.unchangedRules).toBe(0);
    expect(summarize(diff)).toBe('name changed; trustedIssuers changed; description added; rule age changed (query.operator, query.value, position); ' +
      'rule old removed; rule same changed (position); rule new added');
  });

  it('does not call a rule moved when one before it was only removed or added', () => {
    const diff = diffInputs({ queryConfigurations: [rule('a', 1), rule('b', 2)] }, { queryConfigurations: [rule('z', 0), rule('b', 2)] });
    expect(diff.rules.map((r: { id: string; change: string }) => [r.id, r.change])).toEqual([['a', 'removed'], ['z', 'added']]);
    expect(diff.unchangedRules).toBe(1);
  });

  it('tells a number from its text, and says an absent side in words', () => {
    const diff = diffInputs({ queryConfigurations: [rule('age', 18)] }, { queryConfigurations: [rule('age', '18')] });
    expect(diff.rules[0].rows).toEqual([{ path: 'query.value', a: 18, b: '18', change: 'changed' }]);
    expect([shown(18), shown('18'), shown(undefined)]).toEqual(['18', '"18"', '(absent)']);
    expect(summarize(diffInputs({ name: 'x' }, { name: 'x' }))).toBe('No change to the scenario\'s fields or rules');
  });
});
