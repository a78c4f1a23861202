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
    expect(diff.rules.map((r: { id: string; change: string }) => [r.id, r.change])).toEqual([['age', 'changed'], ['old', 'removed'], ['new', 'added']]);
    expect(diff.rules[0].rows).toEqual([
      { path: 'query.operator', a: '$gte', b: '$gt', change: 'changed' },
      { path: 'query.value', a: 18, b: 40, change: 'changed' },
      { path: 'position', a: 1, b: 2, change: 'moved' },
    ]);
    expect(diff.rules[1].rows.every((r: { change: string; b: unknown }) => r.change === 'removed' && r.b === undefined)).toBe(true);
    // Of age and same, swapped, one moved: the other kept its order.
    expect(diff.unchangedRules).toBe(1);
    expect(summarize(diff)).toBe('name changed; trustedIssuers changed; description added; rule age changed (query.operator, query.value, position); ' +
      'rule old removed; rule new added');
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

  it('calls only the rule taken out of order moved, not every rule after it', () => {
    const ids = (list: string[]) => ({ queryConfigurations: list.map((id) => rule(id, 1)) });
    const diff = diffInputs(ids(['a', 'b', 'c', 'd', 'e']), ids(['b', 'c', 'd', 'e', 'a']));
    expect(diff.rules).toEqual([{ id: 'a', change: 'changed', rows: [{ path: 'position', a: 1, b: 5, change: 'moved' }] }]);
    expect(diff.unchangedRules).toBe(4);
    const middle = diffInputs(ids(['a', 'b', 'c', 'd']), ids(['a', 'c', 'b', 'd']));
    expect(middle.rules.map((r: { id: string }) => r.id)).toHaveLength(1);
    expect(middle.unchangedRules).toBe(3);
  });

  it('compares objects whatever their keys\' order, and a scenario\'s object field by field', () => {
    const reordered = { id: 'age', query: { value: 18, operator: '$gte', attribute: 'personalData.age', requestId: 1, type: 'IDInformation' } };
    const same = diffInputs({ meta: { a: 1, b: { c: 2, d: 3 } }, queryConfigurations: [rule('age', 18)] },
      { meta: { b: { d: 3, c: 2 }, a: 1 }, queryConfigurations: [reordered] });
    expect(same).toEqual({ fields: [], rules: [], unchangedRules: 1 });
    const changed = diffInputs({ meta: { a: 1, b: 2 } }, { meta: { a: 1, b: 3, c: 4 } });
    expect(changed.fields).toEqual([
      { path: 'meta.b', a: 2, b: 3, change: 'changed' },
      { path: 'meta.c', a: undefined, b: 4, change: 'added' },
    ]);
  });

  it('says a rule added with an empty query added, and an emptied object\'s field removed', () => {
    const added = diffInputs({ queryConfigurations: [] }, { queryConfigurations: [{ id: 'blank', query: {} }] });
    expect(added.rules).toEqual([{ id: 'blank', change: 'added', rows: [{ path: 'query', a: undefined, b: {}, change: 'added' }] }]);
    expect(added.unchangedRules).toBe(0);
    expect(diffInputs({ queryConfigurations: [{ id: 'bare' }] }, { queryConfigurations: [] }).rules).toEqual([{ id: 'bare', change: 'removed', rows: [] }]);
    const emptied = diffInputs({ meta: { a: 1 } }, { meta: {} });
    expect(emptied.fields).toEqual([
      { path: 'meta.a', a: 1, b: undefined, change: 'removed' },
      { path: 'meta', a: undefined, b: {}, change: 'added' },
    ]);
  });
});
