/**
 * Reading OnChainZKP verification from the chain. Nothing exported here loads viem: the ChainReader (reader.ts) comes
 * through loadViem / chainReaderFor (lazy.ts); only a module that may load viem imports reader.ts itself. Wire-up sketch:
 *
 * ```ts
 * const settings = loadConfig(process.env).chains;              // throws ConfigError (src/config/errors.ts)
 * const reader = await chainReaderFor(settings);                // one per process; hand it to buildApp
 * const outcomes = await evaluateOnChainRules(reader, {         // in execute, for OnChainZKP scenarios
 *   queryConfigurations, smartContractDeployments, address, chain: addressObject?.chain,
 * });
 * ```
 */
export { parseChainRpcUrls, parseChainRef, redactRpcUrl } from './config.js';
export {
  isProofStatusError,
  type ProofStatusEntry, type ProofStatusRead, type ProofStatusReader, type ReadProofStatusesRequest,
} from './proof-status.js';
export { chainReaderFor, noChains } from './lazy.js';
export { resolveVerifierTarget, ruleOutcomes } from './outcomes.js';
export { evaluateOnChainRules, type OnChainInput } from './evaluate.js';
export { verifierAbi } from './abi.js';
