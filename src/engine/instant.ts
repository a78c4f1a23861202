/**
 * Parsed by hand: Date.parse is lenient and locale-dependent for zone-less times. NaN, never throws. A date-time
 * needs a zone; a bare date (where `dateOnly`) is midnight UTC. Second 60 only at minute 59, as the next minute.
 * No memo: a Map lookup by a fresh request string costs as much as the parse.
 */

const MS_PER_DAY = 86_400_000;

/** Days from 1970-01-01 (H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = month > 2 ? month - 3 : month + 9;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Two ASCII digits at i as a number, or -1 (also past the end: charCodeAt answers NaN). */
function d2(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

const MAX_LENGTH = 64;

/** Epoch ms. Fractions beyond milliseconds are kept (up to 9 digits). */
export function parseInstant(s: string, dateOnly: boolean): number {
  const n = s.length;
  if (n < 10 || n > MAX_LENGTH) return NaN;
  const yHi = d2(s, 0);
  const yLo = d2(s, 2);
  if (yHi < 0 || yLo < 0 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return NaN;
  const year = yHi * 100 + yLo;
  const month = d2(s, 5);
  if (month < 1 || month > 12) return NaN;
  const day = d2(s, 8);
  if (day < 1 || day > daysInMonth(year, month)) return NaN;
  const days = daysFromCivil(year, month, day);
  if (n === 10) return dateOnly ? days * MS_PER_DAY : NaN;

  const sep = s.charCodeAt(10);
  if (sep !== 84 /* T */ && sep !== 116 /* t */ && sep !== 32 /* space */) return NaN;
  const hour = d2(s, 11);
  if (hour < 0 || hour > 23 || s.charCodeAt(13) !== 58 /* : */) return NaN;
  const minute = d2(s, 14);
  if (minute < 0 || minute > 59) return NaN;
  let i = 16;
  let second = 0;
  let fraction = 0;
  if (s.charCodeAt(i) === 58) {
    second = d2(s, i + 1);
    if (second < 0 || second > 60 || (second === 60 && minute !== 59)) return NaN;
    i += 3;
    if (s.charCodeAt(i) === 46 /* . */) {
      i++;
      const start = i;
      let digits = 0;
      let scale = 1;
      while (i < n) {
        const c = s.charCodeAt(i) - 48;
        if (c < 0 || c > 9) break;
        if (i - start < 9) {
          digits = digits * 10 + c;
          scale *= 10;
        }
        i++;
      }
      if (i === start) return NaN;
      fraction = (digits * 1000) / scale;
    }
  }
  if (i >= n) return NaN; // no time zone
  const z = s.charCodeAt(i);
  let offset = 0;
  if (z === 90 /* Z */ || z === 122 /* z */) {
    i++;
  } else if (z === 43 /* + */ || z === 45 /* - */) {
    const oh = d2(s, i + 1);
    if (oh < 0 || oh > 23) return NaN;
    i += 3;
    let om = 0;
    if (i < n) {
      if (s.charCodeAt(i) === 58) i++;
      om = d2(s, i);
      if (om < 0 || om > 59) return NaN;
      i += 2;
    }
    offset = (oh * 60 + om) * 60_000;
    if (z === 45) offset = -offset;
  } else {
    return NaN;
  }
  if (i !== n) return NaN;
  return days * MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + fraction - offset;
}
