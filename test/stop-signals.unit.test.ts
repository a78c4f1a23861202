import { describe, expect, it } from 'vitest';
import { DUPLICATE_SIGNAL_MS, stopOrForce } from '../src/cluster.js';

// Issue 36: a signal to the process group of `npm start` reaches node twice; the copy must not force the exit.
describe('stopOrForce', () => {
  const run = (signals: Array<[NodeJS.Signals, number]>) => {
    const calls: string[] = [];
    let t = 0;
    const onSignal = stopOrForce((s) => calls.push(`stop ${s}`), (s) => calls.push(`force ${s}`), () => t);
    for (const [signal, at] of signals) {
      t = at;
      onSignal(signal);
    }
    return calls;
  };

  it('stops on the first signal and ignores the same signal again within DUPLICATE_SIGNAL_MS (the group\'s copy)', () => {
    expect(run([['SIGTERM', 0], ['SIGTERM', 5], ['SIGTERM', DUPLICATE_SIGNAL_MS - 1]])).toEqual(['stop SIGTERM']);
    expect(run([['SIGINT', 100], ['SIGINT', 103]])).toEqual(['stop SIGINT']);
  });

  it('forces on the same signal sent later, and on a different signal at any time', () => {
    expect(run([['SIGTERM', 0], ['SIGTERM', 3], ['SIGTERM', DUPLICATE_SIGNAL_MS]])).toEqual(['stop SIGTERM', 'force SIGTERM']);
    expect(run([['SIGTERM', 0], ['SIGINT', 1]])).toEqual(['stop SIGTERM', 'force SIGINT']);
  });
});
