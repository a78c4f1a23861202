import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { PlanCache, type Head } from '../src/domain/plan-cache.js';

function counter(head: Head = { seq: 1, revision: 1 }) {
  let reads = 0;
  let current: Head | undefined = head;
  return {
    read: async () => {
      reads += 1;
      return current;
    },
    set: (h: Head | undefined) => { current = h; },
    get reads() { return reads; },
  };
}

describe('PlanCache.head (single-flight reads of a scenario\'s head)', () => {
  it('shares one read among the executes of one turn of the event loop, and reads again in the next turn', async () => {
    const plans = new PlanCache();
    const store = counter();
    const [a, b, c] = await Promise.all([plans.head('s', store.read), plans.head('s', store.read), plans.head('s', store.read)]);
    expect([a, b, c]).toEqual([{ seq: 1, revision: 1 }, { seq: 1, revision: 1 }, { seq: 1, revision: 1 }]);
    expect(store.reads).toBe(1);
    await nextTurn();
    store.set({ seq: 1, revision: 2 });
    expect(await plans.head('s', store.read)).toEqual({ seq: 1, revision: 2 });
    expect(store.reads).toBe(2);
  });

  it('keys reads by scenario id', async () => {
    const plans = new PlanCache();
    const store = counter();
    await Promise.all([plans.head('s', store.read), plans.head('t', store.read)]);
    expect(store.reads).toBe(2);
  });

  it('reads again at once after forget (a write through this instance), even within the same turn', async () => {
    const plans = new PlanCache();
    const store = counter();
    store.set(undefined);
    expect(await plans.head('s', store.read)).toBeUndefined();
    store.set({ seq: 7, revision: 1 });
    plans.forget('s');
    expect(await plans.head('s', store.read)).toEqual({ seq: 7, revision: 1 });
    expect(store.reads).toBe(2);
  });

  it('shares a failed read with the executes waiting on it, and reads again in the next turn', async () => {
    const plans = new PlanCache();
    let reads = 0;
    const failing = async () => {
      reads += 1;
      throw new Error('database down');
    };
    const results = await Promise.allSettled([plans.head('s', failing), plans.head('s', failing)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(reads).toBe(1);
    await nextTurn();
    await nextTurn();
    expect(await plans.head('s', async () => ({ seq: 1, revision: 1 }))).toEqual({ seq: 1, revision: 1 });
  });
});
