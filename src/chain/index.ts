/** Loads no viem. */
export { parseChainRpcUrls, parseChainRef, redactRpcUrl } from './config.js';
export {
  isProofStatusError,
  type ProofStatusEntry, type ProofStatusRead, type ProofStatusReader, type ReadProofStatusesRequest,
} from './proof-status.js';
export { chainReaderFor, noChains } from './lazy.js';
export { resolveVerifierTarget, ruleOutcomes } from './outcomes.js';
export { evaluateOnChainRules, type OnChainInput } from './evaluate.js';
export { verifierAbi } from './abi.js';
