/**
 * The slots of fair webhook sending (issue 36): targets by origin, and a project's share leaves room for others; a
 * target's window widens while it answers fast and narrows when it does not.
 */
import { describe, expect, it } from 'vitest';
import { DeliverySlots, TARGET_SLOTS, TARGET_SLOTS_MAX, targetKey, type Answer } from '../src/domain/webhook-slots.js';

/** How many of `target`'s deliveries (project 'p', a share of `share`) start now, at most `upTo`. */
function takeAll(slots: DeliverySlots, target: string, now: number, upTo = 100, share = 32): number {
  let taken = 0;
  while (taken < upTo && slots.take(target, 'p', share, now)) taken += 1;
  return taken;
}

/** Ends `n` of the target's deliveries in flight the same way. */
function end(slots: DeliverySlots, target: string, n: number, answer: Answer, now: number): void {
  for (let i = 0; i < n; i++) slots.done(target, 'p', answer, now);
}

/** `rounds` times: as many deliveries as may start, each answered fast. */
function widen(slots: DeliverySlots, target: string, rounds: number, share = 32): void {
  for (let i = 0; i < rounds; i++) end(slots, target, takeAll(slots, target, 0, 100, share), 'fast', 0);
}

describe('webhook delivery slots', () => {
  it('keys a target by its origin: every path of one host is one target, WEBHOOK_URL is \'\'', () => {
    expect(targetKey('https://hooks.example:8443/1?x=2')).toBe('https://hooks.example:8443');
    expect(targetKey('http://h.example/')).toBe('http://h.example');
    expect(targetKey('http://[::1]:9/a/b')).toBe('http://[::1]:9');
    expect(targetKey(null)).toBe('');
    const slots = new DeliverySlots(1000);
    let taken = 0;
    for (let i = 0; i < 20; i++) if (slots.take(targetKey(`https://one.example/${i}`), 'p', 32, 0)) taken += 1;
    expect(taken).toBe(TARGET_SLOTS);
  });

  it('leaves slots free for a project that comes due later, however many slots two tenants want', () => {
    const slots = new DeliverySlots(1000);
    // Two tenants, each with deliveries to many hosts that never answer.
    const share = slots.share(['a', 'b']);
    for (let i = 0; i < 40; i++) for (const p of ['a', 'b']) slots.take(`https://${p}${i}.example`, p, share, 0);
    expect(slots.free()).toBeGreaterThan(0);
    expect(slots.fairness(0).skipProjects).toEqual(['a', 'b']);
    // The third finds a slot at once, and takes its share of what is free.
    const third = slots.share(['c']);
    expect(slots.take('https://c.example', 'c', third, 0)).toBe(true);
  });

  it('widens a fast target\'s window one delivery at a time, up to TARGET_SLOTS_MAX, and the claim is told its room', () => {
    const slots = new DeliverySlots(1000);
    const t = 'https://fast.example';
    expect(takeAll(slots, t, 0)).toBe(TARGET_SLOTS);
    expect(slots.fairness(0).skipTargets).toEqual([t]);
    // Four fast answers: four more in the window, and the claim may take eight (four freed, four new).
    end(slots, t, 4, 'fast', 1);
    expect(slots.fairness(1)).toMatchObject({ skipTargets: [], targetRooms: { [t]: 8 }, projectRooms: { p: 32 / 2 - 4 } });
    expect(takeAll(slots, t, 1)).toBe(8);
    // However fast it answers, the window stops at TARGET_SLOTS_MAX.
    for (let i = 0; i < 10; i++) {
      end(slots, t, TARGET_SLOTS, 'fast', 2);
      takeAll(slots, t, 2);
    }
    end(slots, t, TARGET_SLOTS_MAX, 'fast', 3);
    expect(takeAll(slots, t, 3)).toBe(TARGET_SLOTS_MAX);
  });

  it('keeps a fast target within its project\'s share', () => {
    const slots = new DeliverySlots(1000);
    const t = 'https://fast.example';
    widen(slots, t, 5, 16);
    expect(takeAll(slots, t, 0, 100, 16)).toBe(16);
    expect(slots.fairness(0).skipProjects).toEqual(['p']);
  });

  it('halves the window of a target that answers slowly, not below TARGET_SLOTS', () => {
    const slots = new DeliverySlots(1000);
    const t = 'https://slower.example';
    widen(slots, t, 4);
    expect(takeAll(slots, t, 0)).toBe(TARGET_SLOTS_MAX);
    end(slots, t, TARGET_SLOTS_MAX, 'answered', 0);
    // 32 halved at each of 32 slow answers: back to TARGET_SLOTS.
    expect(takeAll(slots, t, 0)).toBe(TARGET_SLOTS);
  });

  it('drops a widened target that stops answering to one delivery at a time, after its backoff, and starts again at TARGET_SLOTS', () => {
    const slots = new DeliverySlots(1000);
    const t = 'https://was-fast.example';
    widen(slots, t, 4);
    expect(takeAll(slots, t, 0)).toBe(TARGET_SLOTS_MAX);
    // Every delivery in flight times out: one backoff step, then one at a time.
    end(slots, t, TARGET_SLOTS_MAX, 'none', 5000);
    expect(takeAll(slots, t, 5500)).toBe(0);
    expect(slots.fairness(5500).skipTargets).toEqual([t]);
    expect(takeAll(slots, t, 6000)).toBe(1);
    expect(slots.fairness(6000).skipTargets).toEqual([t]);
    slots.done(t, 'p', 'none', 6100);
    expect(takeAll(slots, t, 8100)).toBe(1);
    // It answers again: the window it had is not given back at once.
    slots.done(t, 'p', 'answered', 8200);
    expect(takeAll(slots, t, 8200)).toBe(TARGET_SLOTS);
  });

  it('forgets a widened window a while after the target\'s last delivery', () => {
    const slots = new DeliverySlots(1000);
    const t = 'https://once-fast.example';
    takeAll(slots, t, 0);
    end(slots, t, TARGET_SLOTS, 'fast', 0);
    expect(slots.fairness(1000).targetRooms).toEqual({ [t]: 2 * TARGET_SLOTS });
    expect(slots.fairness(3_700_000).targetRooms).toEqual({});
    expect(takeAll(slots, t, 3_700_000)).toBe(TARGET_SLOTS);
  });
});
