import { unavailableEvaluator } from './unavailable.js';

/** OnChainZKP: the proof is verified by the scenario's verifier contract. Not implemented yet. */
export const onChainZkpEvaluator = unavailableEvaluator('OnChainZKP', 'on-chain zero-knowledge proof verification');
