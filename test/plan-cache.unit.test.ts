import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { PlanCache } from '../src/domain/plan-cache.js';
import type { ScenarioHead } from '../src/store/types.js';
import { TYPES } from './engine/factories.js';

function counter(head: ScenarioHead[] = [{ seq: 1, revision: 1, shadow: null }]) {
  let reads = 0;
  let current: ScenarioHead[] = head;
  return {
    read: async () => {
      reads += 1;
      return current;
    },
    set: (h: ScenarioHead[]) => { current = h; },
    get reads() { return reads; },
  };
}

describe('PlanCache.head (single-flight reads of a scenario\'s head)', () => {
  it('shares one read among the executes of one turn of the event loop, and reads again in the next turn', async () => {
    const plans = new PlanCache(TYPES);
    const store = counter();
    const [a, b, c] = await Promise.all([plans.head('s', '*', store.read), plans.head('s', '*', store.read), plans.head('s', '*', store.read)]);
    expect([a, b, c]).toEqual([[{ seq: 1, revision: 1, shadow: null }], [{ seq: 1, revision: 1, shadow: null }], [{ seq: 1, revision: 1, shadow: null }]]);
    expect(store.reads).toBe(1);
    await nextTurn();
    store.set([{ seq: 1, revision: 2, shadow: null }]);
    expect(await plans.head('s', '*', store.read)).toEqual([{ seq: 1, revision: 2, shadow: null }]);
    expect(store.reads).toBe(2);
  });

  it('keys reads by scenario id and by the projects they look in', async () => {
    const plans = new PlanCache(TYPES);
    const store = counter();
    await Promise.all([plans.head('s', '*', store.read), plans.head('t', '*', store.read)]);
    expect(store.reads).toBe(2);
    await Promise.all([plans.head('u', '["a"]', store.read), plans.head('u', '["b"]', store.read), plans.head('u', '["a"]', store.read)]);
    expect(store.reads).toBe(4);
  });

  it('reads again at once after forget (a write through this instance), even within the same turn', async () => {
    const plans = new PlanCache(TYPES);
    const store = counter();
    store.set([]);
    expect(await plans.head('s', '*', store.read)).toEqual([]);
    store.set([{ seq: 7, revision: 1, shadow: null }]);
    plans.forget('s', 7);
    expect(await plans.head('s', '*', store.read)).toEqual([{ seq: 7, revision: 1, shadow: null }]);
    expect(store.reads).toBe(2);
  });

  it('keeps compiled plans per seq: two scenarios with one id (two projects) are two entries', () => {
    const plans = new PlanCache(TYPES);
    const row = (seq: number, projectId: string) => ({
      seq, id: 'same', revision: 1, createdAt: '', updatedAt: '',
      input: {
        name: projectId, type: 'ChallengeQuery', projectId, smartContractDeployments: [],
        queryConfigurations: [{ id: 'q', query: { type: 'T', requestId: 1, attribute: 'a', value: 1, operator: '$eq' } }],
      },
    }) as never;
    plans.compile(row(1, 'pa'));
    plans.compile(row(2, 'pb'));
    expect(plans.current({ seq: 1, revision: 1, shadow: null })?.projectId).toBe('pa');
    expect(plans.current({ seq: 2, revision: 1, shadow: null })?.projectId).toBe('pb');
    expect(plans.current({ seq: 2, revision: 2, shadow: null })).toBeUndefined();
    plans.forget('same', 2);
    expect(plans.current({ seq: 2, revision: 1, shadow: null })).toBeUndefined();
    expect(plans.current({ seq: 1, revision: 1, shadow: null })?.projectId).toBe('pa');
  });

  it('shares a failed read with the executes waiting on it, and reads again in the next turn', async () => {
    const plans = new PlanCache(TYPES);
    let reads = 0;
    const failing = async (): Promise<ScenarioHead[]> => {
      reads += 1;
      throw new Error('database down');
    };
    const results = await Promise.allSettled([plans.head('s', '*', failing), plans.head('s', '*', failing)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(reads).toBe(1);
    await nextTurn();
    await nextTurn();
    expect(await plans.head('s', '*', async () => [{ seq: 1, revision: 1, shadow: null }])).toEqual([{ seq: 1, revision: 1, shadow: null }]);
  });
});
