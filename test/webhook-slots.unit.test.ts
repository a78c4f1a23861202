/** The slots of fair webhook sending (issue 36): targets by origin, and a project's share leaves room for others. */
import { describe, expect, it } from 'vitest';
import { DeliverySlots, TARGET_SLOTS, targetKey } from '../src/domain/webhook-slots.js';

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
});
