/** Which presented credentials a plan reads, and whether each is usable now (assessed once). Never quotes their contents. */
import type { Credential } from '../schemas/credential.js';
import { parseInstant } from './instant.js';
import type { PreparedCredential, RunContext, TrustVerdict } from './types.js';

const UNASSESSED = -1;
const USABLE = 0;
const NOT_YET_ISSUED = 1;
const EXPIRED = 2;
const BAD_ISSUANCE_DATE = 3;
const BAD_EXPIRATION_DATE = 4;
const UNTRUSTED = 5;
const TRUST_UNDECIDED = 6;

function instantOf(x: unknown): number {
  return typeof x === 'string' ? parseInstant(x, false) : NaN;
}

/** Dates first: an expired credential is not-valid even when its revocation status was undecidable. */
function assess(c: Credential, trust: TrustVerdict | undefined, now: number): number {
  const issued = instantOf(c.issuanceDate);
  if (Number.isNaN(issued)) return BAD_ISSUANCE_DATE;
  // No expirationDate: the credential never expires (W3C and iden3 make it optional).
  const expires = c.expirationDate === undefined ? Infinity : instantOf(c.expirationDate);
  if (Number.isNaN(expires)) return BAD_EXPIRATION_DATE;
  if (!(issued <= now)) return NOT_YET_ISSUED;
  if (!(expires > now)) return EXPIRED;
  if (trust !== undefined && !trust.ok) return trust.status === 'error' ? TRUST_UNDECIDED : UNTRUSTED;
  return USABLE;
}

export function isUsable(c: PreparedCredential, now: number): boolean {
  let s = c.state;
  if (s === UNASSESSED) s = c.state = assess(c.credential, c.trust, now);
  return s === USABLE;
}

export function isUndecided(c: PreparedCredential): boolean {
  return c.state === TRUST_UNDECIDED;
}

/** The date check a credential failed, as trace.ts names it. */
export function failedDateCheck(c: PreparedCredential, now: number): 'dates' | 'issued' | 'expiry' | undefined {
  isUsable(c, now);
  switch (c.state) {
    case BAD_ISSUANCE_DATE:
    case BAD_EXPIRATION_DATE:
      return 'dates';
    case NOT_YET_ISSUED:
      return 'issued';
    case EXPIRED:
      return 'expiry';
    default:
      return undefined;
  }
}

export function label(c: PreparedCredential): string {
  const id: unknown = c.credential.id;
  return `credential #${c.index + 1} (${typeof id === 'string' ? id : 'without id'})`;
}

/** Why a credential is not usable (failure path only). */
export function unusableReason(c: PreparedCredential, now: number): string | undefined {
  if (isUsable(c, now)) return undefined;
  const cred = c.credential;
  switch (c.state) {
    case BAD_ISSUANCE_DATE:
      return 'issuanceDate is not a valid RFC 3339 date-time, so the credential cannot be used';
    case BAD_EXPIRATION_DATE:
      return 'expirationDate is not a valid RFC 3339 date-time, so the credential cannot be used';
    case NOT_YET_ISSUED:
      return `not yet issued (issuanceDate ${cred.issuanceDate} is after the evaluation time)`;
    case UNTRUSTED:
    case TRUST_UNDECIDED:
      // set only from a verdict that is not ok
      if (c.trust?.ok === false) return c.trust.reason;
      return 'the credential is not trusted';
    default:
      return `expired (expirationDate ${cred.expirationDate} is not after the evaluation time)`;
  }
}

/** Indexes the credentials under the slots of the types the plan reads, in one pass; the others are never read again. */
export function prepareRun(
  slots: ReadonlyMap<string, number>,
  credentials: readonly Credential[],
  now: number,
  trust?: ReadonlyArray<TrustVerdict | undefined>,
): RunContext {
  const bySlot: (PreparedCredential[] | undefined)[] = [];
  if (slots.size > 0 && Array.isArray(credentials)) {
    for (let i = 0; i < slots.size; i++) bySlot.push(undefined);
    for (let i = 0; i < credentials.length; i++) {
      const credential = credentials[i];
      if (typeof credential !== 'object' || credential === null) continue;
      const types: unknown = credential.type;
      if (!Array.isArray(types)) continue;
      let prepared: PreparedCredential | undefined;
      for (let j = 0; j < types.length; j++) {
        const type: unknown = types[j];
        const slot = typeof type === 'string' ? slots.get(type) : undefined;
        if (slot === undefined) continue;
        if (prepared === undefined) {
          prepared = { index: i, credential, trust: trust === undefined ? undefined : trust[i], state: UNASSESSED };
        }
        const list = bySlot[slot];
        if (list === undefined) bySlot[slot] = [prepared];
        else if (list[list.length - 1] !== prepared) list.push(prepared); // a type listed twice
      }
    }
  }
  return { now, bySlot };
}
