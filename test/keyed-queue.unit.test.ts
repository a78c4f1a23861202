import { describe, expect, it } from 'vitest';
import { KeyedQueue } from '../src/domain/keyed-queue.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('KeyedQueue', () => {
  it('runs the tasks of one key one at a time, in order, and those of other keys alongside', async () => {
    const q = new KeyedQueue();
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([q.run('a', task('a1')), q.run('a', task('a2')), q.run('b', task('b1'))]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    expect(log.indexOf('a1 end')).toBeLessThan(log.indexOf('a2 start'));
    expect(log.indexOf('b1 start')).toBeLessThan(log.indexOf('a1 end'));
    expect(q.size).toBe(0);
  });

  it('goes on with the next task of a key after one failed, and passes the failure to its caller', async () => {
    const q = new KeyedQueue();
    const failing = q.run('a', async () => {
      await tick();
      throw new Error('boom');
    });
    const next = q.run('a', async () => 'next');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
    await tick();
    expect(q.size).toBe(0); // a failed task leaves no key behind
  });
});
