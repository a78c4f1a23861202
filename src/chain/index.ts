/**
 * Reading OnChainZKP verification from the chain. Nothing exported here loads viem: the ChainReader (reader.ts) comes
 * through loadViem / chainReaderFor (lazy.ts); only a module that may load viem imports reader.ts itself. Wire-up sketch:
 *
 * ```ts
 * const settings = chainSettingsFromEnv(process.env);          // throws ConfigError (src/config/errors.ts)
 * const reader = await chainReaderFor(settings);                // one per process; hand it to buildApp
 * const outcomes = await evaluateOnChainRules(reader, {         // in execute, for OnChainZKP scenarios
 *   queryConfigurations, smartContractDeployments, address, chain: addressObject?.chain,
 * });
 * ```
 */
export {
  chainSettingsFromEnv, parseChainRpcUrls, parseChainRef, redactRpcUrl, CHAIN_DEFAULTS,
  type ChainEndpoint, type ChainSettings, type MulticallMode,
} from './config.js';
export {
  isProofStatusError,
  type ChainErrorCode, type ProofStatusEntry, type ProofStatusError, type ProofStatusRead, type ProofStatusReader,
  type ReadProofStatusesRequest, type RequestId,
} from './proof-status.js';
export { chainReaderFor, noChains } from './lazy.js';
export type { ChainReader, ChainReaderOptions, ChainReaderStats } from './reader.js';
export {
  resolveVerifierTarget, ruleOutcomes, requestIdsOf, deploymentChain,
  type OnChainRuleOutcome, type OnChainStatus, type VerifierTarget, type TargetOptions,
} from './outcomes.js';
export { evaluateOnChainRules, type OnChainInput } from './evaluate.js';
export { VERIFIER_METHODS, MULTICALL3_ADDRESS, verifierAbi, type VerifierMethod } from './abi.js';
