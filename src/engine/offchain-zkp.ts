import { unavailableEvaluator } from './unavailable.js';

/** OffChainZKP: the wallet answers an iden3comm authorization request with a proof. Not implemented yet. */
export const offChainZkpEvaluator = unavailableEvaluator('OffChainZKP', 'off-chain zero-knowledge proof verification');
