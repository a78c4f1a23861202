/** What both zero-knowledge scenario types (OnChainZKP, OffChainZKP) ask of their rules' queries. */
import type { QueryPolicy } from '../engine/index.js';

export const ZKP_REQUEST_ID_REQUIRED = 'the zero-knowledge proof request number';

/** The iden3 V2 query circuits take at most 64 values in an $in/$nin list. */
export const IDEN3_MAX_IN_VALUES: NonNullable<QueryPolicy['maxInValues']> = { max: 64, why: 'the limit of the iden3 circuits' };
