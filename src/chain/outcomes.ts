/** `error` (could not be decided) is never a pass. */
import type { QueryConfiguration } from '../schemas/scenario.js';
import { deploymentBlock, isUsableDeployment, unusableDeploymentReason, type SmartContractDeployment } from '../domain/deployments.js';
import { parseChainRef } from './config.js';
import { isProofStatusError, requestIdOf, type ProofStatusEntry, type RequestId } from './proof-status.js';

type OnChainStatus = 'valid' | 'not-valid' | 'error';

export interface OnChainRuleOutcome {
  objectId: string;
  requestId: string | null;
  status: OnChainStatus;
  is_valid: boolean;
  reasons: string[];
  txHash?: string;
  scenarioVerifierAddress: string | null;
  chain: string | null;
  blockNumber: number | null;
}

export type VerifierTarget =
  | { ok: true; chain: string; address: string; deploymentId: string; fromBlock?: number }
  | { ok: false; reasons: string[]; chain: string | null; address: string | null };

export interface TargetOptions {
  hasChain(chain: string): boolean;
  defaultChain?: string;
  preferChain?: string;
}

/** A deployment's `chain`, else the default; null when `chain` is not an `eip155:<id>` reference. */
function deploymentChain(d: SmartContractDeployment, defaultChain?: string): string | null | undefined {
  const own = 'chain' in d ? d.chain : undefined;
  if (own !== undefined && own !== null) return parseChainRef(own)?.chain ?? null;
  return defaultChain === undefined ? undefined : parseChainRef(defaultChain)?.chain;
}

/** The last: a redeployment is appended. */
export function resolveVerifierTarget(deployments: readonly SmartContractDeployment[] | null | undefined, options: TargetOptions): VerifierTarget {
  const list = Array.isArray(deployments) ? deployments.filter((d) => d !== null && typeof d === 'object') : [];
  const usable = list.filter(isUsableDeployment);
  const last = usable.at(-1);
  if (last === undefined) {
    const reasons = ['the scenario has no usable smart contract deployment (one with status Deployed and a contract address)'];
    if (list.length === 0) reasons.push('smartContractDeployments is empty');
    for (const d of list.slice(0, 5)) reasons.push(unusableDeploymentReason(d) ?? '');
    if (list.length > 5) reasons.push(`and ${list.length - 5} more deployments`);
    return { ok: false, reasons, chain: null, address: null };
  }
  const prefer = options.preferChain === undefined ? undefined : parseChainRef(options.preferChain)?.chain;
  const preferred = prefer === undefined ? undefined : usable.reverse().find((d) => deploymentChain(d, options.defaultChain) === prefer);
  const chosen = preferred ?? last;
  const address = chosen.address;
  const chain = deploymentChain(chosen, options.defaultChain);
  const name = `deployment "${chosen.id}"`;
  if (chain === null) {
    return { ok: false, reasons: [`${name} names a chain that is not an EVM CAIP-2 reference (eip155:<chain id>)`], chain: null, address };
  }
  if (chain === undefined) {
    return { ok: false, reasons: [`${name} names no chain and no default chain is configured (CHAIN_DEFAULT)`], chain: null, address };
  }
  if (!options.hasChain(chain)) {
    return { ok: false, reasons: [`no RPC endpoint is configured for chain ${chain}, where ${name} lives (CHAIN_RPC_URLS)`], chain, address };
  }
  const fromBlock = deploymentBlock(chosen);
  return fromBlock === undefined
    ? { ok: true, chain, address, deploymentId: chosen.id }
    : { ok: true, chain, address, deploymentId: chosen.id, fromBlock };
}

const asNumber = (b: bigint | undefined): number | null => (b === undefined ? null : Number(b));

export function ruleOutcomes(
  queryConfigurations: readonly QueryConfiguration[],
  target: VerifierTarget,
  sender: string,
  statuses: readonly ProofStatusEntry[],
): OnChainRuleOutcome[] {
  const byId = new Map<string, ProofStatusEntry>();
  for (const s of statuses) byId.set(String(s.requestId), s);
  const address = target.address;
  const chain = target.chain;
  return queryConfigurations.map((qc): OnChainRuleOutcome => {
    const id = requestIdOf(qc.query?.requestId);
    const requestId = id === undefined ? null : id.toString();
    const base = { objectId: qc.id, requestId, scenarioVerifierAddress: address, chain };
    const error = (reasons: string[], blockNumber: number | null = null): OnChainRuleOutcome =>
      ({ ...base, status: 'error', is_valid: false, reasons, blockNumber });
    if (requestId === null) return error(['the query configuration has no requestId, so there is no on-chain proof to look up']);
    if (!target.ok) return error(target.reasons.slice());
    const s = byId.get(String(requestId));
    if (s === undefined) return error([`the proof status of request ${requestId} was not read`]);
    if (isProofStatusError(s)) {
      const why = s.code === 'request-not-found'
        ? `request ${requestId} is not set on verifier ${target.address} (${target.chain}): the scenario's requestId does not match the contract`
        : `could not read the proof status of request ${requestId} from verifier ${target.address} (${target.chain}): ${s.error}`;
      return error([why], asNumber(s.blockNumber));
    }
    const blockNumber = asNumber(s.blockNumber);
    if (s.verified) {
      const valid: OnChainRuleOutcome = { ...base, status: 'valid', is_valid: true, reasons: [], blockNumber };
      if (s.txHash !== undefined) valid.txHash = s.txHash;
      return valid;
    }
    return {
      ...base,
      status: 'not-valid',
      is_valid: false,
      reasons: [`verifier ${target.address} (${target.chain}) holds no verified proof of request ${requestId} from ${sender} at block ${s.blockNumber}`],
      blockNumber,
    };
  });
}

export function requestIdsOf(queryConfigurations: readonly QueryConfiguration[]): RequestId[] {
  const seen = new Map<string, RequestId>();
  for (const qc of queryConfigurations) {
    const id = requestIdOf(qc.query?.requestId);
    if (id !== undefined && !seen.has(id.toString())) seen.set(id.toString(), id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : id);
  }
  return [...seen.values()];
}
