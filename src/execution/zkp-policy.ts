import type { QueryPolicy } from '../engine/index.js';

export const ZKP_REQUEST_ID_REQUIRED = 'the zero-knowledge proof request number';

/** The iden3 V2 query circuits' limit. */
export const IDEN3_MAX_IN_VALUES: NonNullable<QueryPolicy['maxInValues']> = { max: 64, why: 'the limit of the iden3 circuits' };
