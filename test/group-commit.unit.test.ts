import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../src/store/group-commit.js';

/** A flush that waits until the test releases it, recording each batch. */
function gated() {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  const flush = (items: number[]) => new Promise<void>((resolve) => {
    batches.push(items);
    gates.push(resolve);
  });
  return { batches, flush, release: () => gates.shift()?.() };
}

describe('GroupCommit', () => {
  it('with one flush in flight, batches what arrives meanwhile and answers each caller after its batch', async () => {
    const g = gated();
    const gc = new GroupCommit<number>(g.flush);
    const done: number[] = [];
    const add = (n: number) => gc.add(n).then(() => done.push(n));
    const first = [add(1), add(2)];
    await nextTurn();
    const second = [add(3), add(4)];
    await nextTurn();
    expect(g.batches).toEqual([[1, 2]]);
    g.release();
    await Promise.all(first);
    expect(done).toEqual([1, 2]);
    await nextTurn();
    expect(g.batches).toEqual([[1, 2], [3, 4]]);
    g.release();
    await Promise.all(second);
    await gc.drain();
  });

  it('with more in flight, sends the next batch without waiting for the one before; drain waits for all', async () => {
    const g = gated();
    const gc = new GroupCommit<number>(g.flush, 256, 2);
    const done: number[] = [];
    const pending = [gc.add(1).then(() => done.push(1))];
    await nextTurn();
    pending.push(gc.add(2).then(() => done.push(2)));
    await nextTurn();
    pending.push(gc.add(3).then(() => done.push(3)));
    await nextTurn();
    expect(g.batches).toEqual([[1], [2]]); // the third waits: two are in flight
    let drained = false;
    void gc.drain().then(() => { drained = true; });
    g.release();
    await pending[0];
    await nextTurn();
    expect(g.batches).toEqual([[1], [2], [3]]);
    g.release();
    g.release();
    await Promise.all(pending);
    await nextTurn();
    expect(drained).toBe(true);
    expect(done).toEqual([1, 2, 3]);
  });

  it('rejects every caller of a failed batch, and goes on with the next', async () => {
    let fail = true;
    const gc = new GroupCommit<number>(async () => {
      if (fail) throw new Error('disk full');
    });
    const failed = await Promise.allSettled([gc.add(1), gc.add(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(gc.add(3)).resolves.toBeUndefined();
  });

  it('fails only the item the database refuses: a failed batch is flushed again item by item', async () => {
    const committed: number[] = [];
    const gc = new GroupCommit<number>((items) => {
      if (items.includes(13)) throw new Error('refused row');
      committed.push(...items);
    });
    const results = await Promise.allSettled([1, 2, 13, 4].map((n) => gc.add(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(committed).toEqual([1, 2, 4]);
  });
});
