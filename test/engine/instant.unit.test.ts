import { describe, it, expect } from 'vitest';
import { daysFromCivil, parseInstant } from '../../src/engine/instant.js';

describe('parseInstant: ISO 8601 dates and RFC 3339 date-times to epoch ms', () => {
  it('reads a UTC date-time like Date.parse does', () => {
    expect(parseInstant('2001-02-03T04:05:06Z', false)).toBe(Date.parse('2001-02-03T04:05:06Z'));
  });

  it('reads lowercase t and z and a space separator', () => {
    const expected = Date.parse('2001-02-03T04:05:06Z');
    expect(parseInstant('2001-02-03t04:05:06z', false)).toBe(expected);
    expect(parseInstant('2001-02-03 04:05:06Z', false)).toBe(expected);
  });

  it('applies positive and negative offsets in every written form', () => {
    const utc = Date.parse('2001-02-03T04:05:06Z');
    expect(parseInstant('2001-02-03T09:35:06+05:30', false)).toBe(utc);
    expect(parseInstant('2001-02-03T09:35:06+0530', false)).toBe(utc);
    expect(parseInstant('2001-02-03T09:05:06+05', false)).toBe(utc);
    expect(parseInstant('2001-02-02T23:05:06-05:00', false)).toBe(utc);
    expect(parseInstant('2001-02-03T04:05:06-00:00', false)).toBe(utc);
  });

  it('keeps fractions of a second, including sub-millisecond digits', () => {
    expect(parseInstant('2001-02-03T04:05:06.789Z', false)).toBe(Date.parse('2001-02-03T04:05:06.789Z'));
    expect(parseInstant('2001-02-03T04:05:06.5Z', false)).toBe(Date.parse('2001-02-03T04:05:06.500Z'));
    const a = parseInstant('2001-02-03T04:05:06.000001Z', false);
    const b = parseInstant('2001-02-03T04:05:06.000002Z', false);
    expect(a).toBeLessThan(b);
    expect(a).toBeGreaterThan(Date.parse('2001-02-03T04:05:06Z'));
  });

  it('reads HH:MM without seconds', () => {
    expect(parseInstant('2001-02-03T04:05Z', false)).toBe(Date.parse('2001-02-03T04:05:00Z'));
  });

  it('reads a date-only string as midnight UTC only where dates are allowed', () => {
    expect(parseInstant('2001-02-03', true)).toBe(Date.UTC(2001, 1, 3));
    expect(parseInstant('2001-02-03', false)).toBeNaN();
  });

  it('accepts 29 February only in leap years', () => {
    expect(parseInstant('2000-02-29', true)).toBe(Date.UTC(2000, 1, 29));
    expect(parseInstant('2024-02-29T00:00:00Z', false)).toBe(Date.UTC(2024, 1, 29));
    expect(parseInstant('1900-02-29', true)).toBeNaN();
    expect(parseInstant('2001-02-29', true)).toBeNaN();
  });

  it('accepts a leap second at minute 59 only, as the next minute', () => {
    expect(parseInstant('2016-12-31T23:59:60Z', false)).toBe(Date.parse('2017-01-01T00:00:00Z'));
    expect(parseInstant('2016-12-31T23:58:60Z', false)).toBeNaN();
  });

  it('rejects strings that are not dates', () => {
    for (const s of [
      '', 'GREEN', '20010203', '2001-2-3', '2001-13-01', '2001-00-10', '2001-04-31', '2001-02-00',
      '2001-02-03T24:00:00Z', '2001-02-03T04:60:00Z', '2001-02-03T04:05:61Z',
      '2001-02-03T04:05:06', // no time zone: names no instant
      '2001-02-03T04:05:06+24:00', '2001-02-03T04:05:06+05:60', '2001-02-03T04:05:06+5', '2001-02-03T04:05:06+05:3',
      '2001-02-03T04:05:06.Z', '2001-02-03T04:05:06ZZ', '2001-02-03X04:05:06Z', '2001-02-03T04:05:06 Z',
      ' 2001-02-03', '2001-02-03 ', '+2001-02-03', '２００１-02-03', '2001-02-03T04:05:06.' + '1'.repeat(60) + 'Z',
    ]) {
      expect(parseInstant(s, true), s).toBeNaN();
    }
  });

  it('matches Date.UTC across centuries (days_from_civil)', () => {
    for (const [y, m, d] of [[1970, 1, 1], [1969, 12, 31], [1600, 3, 1], [2000, 2, 29], [2100, 3, 1], [9999, 12, 31], [1, 1, 1]] as const) {
      const utc = new Date(0);
      utc.setUTCFullYear(y, m - 1, d);
      expect(daysFromCivil(y, m, d) * 86_400_000, `${y}-${m}-${d}`).toBe(utc.getTime());
    }
  });

  it('reads year 0000', () => {
    expect(parseInstant('0000-01-01T00:00:00Z', false)).toBe(Date.parse('0000-01-01T00:00:00Z'));
  });

  it('answers the same for the same text again, and NaN for text over 64 characters', () => {
    const t = parseInstant('2024-02-29T12:00:00Z', false);
    expect(t).toBe(Date.UTC(2024, 1, 29, 12));
    expect(parseInstant('2024-02-29T12:00:00Z', false)).toBe(t);
    expect(parseInstant('2024-02-29', true)).toBe(Date.UTC(2024, 1, 29));
    expect(parseInstant('2024-02-29', false)).toBeNaN(); // a date alone is not a date-time
    expect(parseInstant(`2024-02-29T12:00:00.${'0'.repeat(60)}Z`, false)).toBeNaN();
  });
});
