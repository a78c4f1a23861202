/**
 * The deployer's side of one chain: estimate, fees under the cap, sign, broadcast. Loads viem: import it lazily. The
 * key stays inside the viem account; nothing here returns or throws it.
 */
import {
  BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, createPublicClient, http, keccak256, type Address, type Hex, type PublicClient,
} from 'viem';
import { setTimeout as sleep } from 'node:timers/promises';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { ChainEndpoint } from './config.js';
import { classify, revertDataOf } from './rpc-errors.js';
import {
  setMultiRequestAbi, setMultiRequestData, setRequestsAbi, setRequestsData, type BuiltRequests, type MultiRequest, type ValidatorCircuits, type VerifierRequest,
} from './deploy-requests.js';
import type { Held, HeldRequest } from './deploy-plan.js';

/** The UniversalVerifier's own errors, to name a revert. */
const verifierErrors = [
  'ValidatorIsNotWhitelisted(address validator)', 'RequestIdAlreadyExists(uint256 requestId)', 'GroupIdAlreadyExists(uint256 groupId)',
  'GroupMustHaveAtLeastTwoRequests(uint256 groupId)', 'MissingUserIDInRequest(uint256 requestId)', 'MissingUserIDInGroupOfRequests(uint256 groupId)',
  'NullifierSessionIDAlreadyExists(uint256 nullifierSessionID)', 'RequestIdNotValid(uint256 expectedRequestId, uint256 requestId)',
  'InvalidRequestOwner(address requestOwner, address sender)', 'VerifierIDIsNotValid(uint256 requestVerifierID, uint256 expectedVerifierID)',
  'RequestIdTypeNotValid()', 'RequestIdUsesReservedBytes()', 'ValidatorNotSupportInterface(address validator)',
  'MultiRequestIdAlreadyExists(uint256 multiRequestId)', 'MultiRequestIdNotValid(uint256 expectedMultiRequestId, uint256 multiRequestId)',
  'RequestIdNotFound(uint256 requestId)', 'GroupIdNotFound(uint256 groupId)', 'RequestShouldNotHaveAGroup(uint256 requestId)',
].map((signature) => {
  const [name, rest] = signature.split('(') as [string, string];
  const inputs = rest.slice(0, -1).split(', ').filter(Boolean).map((p) => {
    const [type, pname] = p.split(' ') as [string, string];
    return { type, name: pname };
  });
  return { type: 'error' as const, name, inputs };
});
const deployAbi = [...setRequestsAbi, ...setMultiRequestAbi, ...verifierErrors];
const requestInfo = [
  { name: 'requestId', type: 'uint256' }, { name: 'metadata', type: 'string' }, { name: 'validator', type: 'address' },
  { name: 'params', type: 'bytes' }, { name: 'creator', type: 'address' },
] as const;
/** What a deploy reads of the verifier before it sends: the requests, groups and multi-request it holds. */
const heldAbi = [
  { type: 'function', name: 'getRequest', stateMutability: 'view', inputs: [{ name: 'requestId', type: 'uint256' }], outputs: [{ name: 'request', type: 'tuple', components: requestInfo }] },
  { type: 'function', name: 'getGroupedRequests', stateMutability: 'view', inputs: [{ name: 'groupID', type: 'uint256' }], outputs: [{ name: '', type: 'tuple[]', components: requestInfo }] },
  { type: 'function', name: 'multiRequestIdExists', stateMutability: 'view', inputs: [{ name: 'multiRequestId', type: 'uint256' }], outputs: [{ name: '', type: 'bool' }] },
] as const;
const circuitsAbi = [{ type: 'function', name: 'getSupportedCircuitIds', stateMutability: 'view', inputs: [], outputs: [{ name: 'ids', type: 'string[]' }] }] as const;

/** The transaction a deploy signs, as stored before its nonce is known: no key, no signature. */
export interface UnsignedSend {
  to: Address;
  data: Hex;
  gas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
}

export class DeployRefusal extends Error {
  constructor(message: string, readonly kind: 'reverted' | 'fee' | 'chain' | 'gas' | 'funds') {
    super(message);
  }
}

const GAP_RETRIES = 20;
const GAP_RETRY_MS = 250;

/** How much gas one more deployment is budgeted (health: can the deployer pay for it). */
export const DEPLOY_GAS_BUDGET = 3_000_000n;

/**
 * What a node says when it will never take a transaction as it is (no retry helps), against a timeout or a network
 * failure; Hardhat's and geth's words. Such a send's nonce would stay unused and hold back every later one.
 */
const REFUSED_FOR_GOOD = [
  /insufficient funds|doesn't have enough funds|exceeds transaction sender account balance/i,
  /exceeds (the )?block gas limit|gas limit reached|exceeds block gas/i,
  /intrinsic gas too low/i,
  /fee cap|max fee per gas (higher|less) than|exceeds the configured cap|tip higher than/i,
  /oversized|transaction size exceeds|exceeds max(imum)? (transaction )?size/i,
];

export function refusedForGood(err: unknown): boolean {
  const texts: string[] = [];
  if (err instanceof BaseError) {
    err.walk((e) => {
      if (e instanceof Error) texts.push(e.message, 'details' in e && typeof e.details === 'string' ? e.details : '');
      return false;
    });
  } else texts.push(err instanceof Error ? err.message : String(err));
  return texts.some((t) => REFUSED_FOR_GOOD.some((re) => re.test(t)));
}

/** setMultiRequest's gas: a base, and per request or group id the slot it fills and the validator call that checks it. */
const MULTI_BASE_GAS = 250_000n;
const MULTI_ENTRY_GAS = 150_000n;

/** Gas of a plain transfer: what fills a refused send's nonce. */
const TRANSFER_GAS = 21_000n;

export class DeployerChain {
  readonly client: PublicClient;
  private readonly batched: PublicClient;
  private readonly account: PrivateKeyAccount;

  constructor(
    readonly endpoint: ChainEndpoint, key: Hex, private readonly maxFeePerGas: bigint, private readonly maxGas: bigint, private readonly timeoutMs = 10_000,
  ) {
    this.account = privateKeyToAccount(key);
    this.client = createPublicClient({ transport: http(endpoint.url, { timeout: timeoutMs, retryCount: 1 }) });
    // JSON-RPC batching for held(): its reads go in one HTTP request.
    this.batched = createPublicClient({ transport: http(endpoint.url, { timeout: timeoutMs, retryCount: 1, batch: { batchSize: 200, wait: 0 } }) });
  }

  get address(): Address {
    return this.account.address;
  }

  async validatorCircuits(addresses: readonly Address[]): Promise<ValidatorCircuits[]> {
    return Promise.all(addresses.map(async (address) => {
      try {
        const circuits = await this.client.readContract({ address, abi: circuitsAbi, functionName: 'getSupportedCircuitIds' });
        return { address, circuits };
      } catch (err) {
        if (revertDataOf(err) === undefined && !answeredNoCircuits(err)) throw new ChainUnanswered(err, this.endpoint.chain, this.timeoutMs);
        throw new DeployRefusal(`validator ${address} on ${this.endpoint.chain} does not answer getSupportedCircuitIds: not an iden3 request validator`, 'chain');
      }
    }));
  }

  /**
   * Gas with a fifth more than the estimate; a revert is a refusal naming the contract's error, and so is gas above
   * CHAIN_DEPLOY_MAX_GAS (or the block's limit) or a cost above the deployer's balance: nothing takes a nonce then.
   */
  prepare(verifier: Address, requests: readonly VerifierRequest[]): Promise<UnsignedSend> {
    return this.estimated(verifier, setRequestsData(requests), 'setRequests', [requests]);
  }

  /** setMultiRequest alone, when the verifier holds its requests already: estimated as setRequests is. */
  prepareMultiAlone(verifier: Address, multi: MultiRequest): Promise<UnsignedSend> {
    return this.estimated(verifier, setMultiRequestData(multi), 'setMultiRequest', [multi]);
  }

  /** Estimated with the contract's ABI: a revert is decoded to its error's name. */
  private async estimated(verifier: Address, data: Hex, call: 'setRequests' | 'setMultiRequest', args: readonly unknown[]): Promise<UnsignedSend> {
    let estimate: bigint;
    try {
      estimate = await this.client.estimateContractGas({
        address: verifier, abi: deployAbi, functionName: call, args, account: this.account.address,
      } as unknown as Parameters<PublicClient['estimateContractGas']>[0]);
    } catch (err) {
      if (revertDataOf(err) === undefined) throw new ChainUnanswered(err, this.endpoint.chain, this.timeoutMs);
      throw new DeployRefusal(`${call} on verifier ${verifier} (${this.endpoint.chain}) would revert: ${revertReason(err)}`, 'reverted');
    }
    return this.priced(verifier, data, (estimate * 6n) / 5n, call, 'the estimate and a fifth more');
  }

  /**
   * What the verifier holds of a deploy's requests, groups and multi-request, in one batched round. A revert is an
   * answer (getRequest reverts RequestIdNotFound); no answer is ChainUnanswered.
   */
  async held(verifier: Address, built: BuiltRequests): Promise<Held> {
    const answer = <T>(read: Promise<T>, absent: T): Promise<T> => read.catch((err: unknown) => {
      if (revertDataOf(err) === undefined) throw new ChainUnanswered(err, this.endpoint.chain, this.timeoutMs);
      return absent;
    });
    const read = { address: verifier, abi: heldAbi } as const;
    const groupIds = [...new Set(built.members.flatMap((m) => (m.groupId === 0n ? [] : [m.groupId])))];
    const multi = built.multiRequest;
    const [requests, groups, multiHeld] = await Promise.all([
      Promise.all(built.requests.map((r) => answer<HeldRequest | undefined>(
        this.batched.readContract({ ...read, functionName: 'getRequest', args: [r.requestId] }).then(({ validator, params, creator }) => ({ validator, params, creator })),
        undefined,
      ))),
      Promise.all(groupIds.map((g) => answer(this.batched.readContract({ ...read, functionName: 'getGroupedRequests', args: [g] }).then((xs) => xs.map((x) => x.requestId)), []))),
      multi === undefined ? false : answer(this.batched.readContract({ ...read, functionName: 'multiRequestIdExists', args: [multi.multiRequestId] }), false),
    ]);
    return {
      requests: new Map(built.requests.map((r, i) => [r.requestId, requests[i]])),
      groups: new Map(groupIds.map((g, i) => [g, groups[i] ?? []])),
      multi: multiHeld,
    };
  }

  /**
   * setMultiRequest reverts until setRequests is mined (its requests must exist), so it cannot be estimated before:
   * its gas is a bound on what it stores and checks (test/chain/deploy-multi.test.ts measures the margin).
   */
  prepareMulti(verifier: Address, multi: MultiRequest, alsoSpends = 0n): Promise<UnsignedSend> {
    const gas = MULTI_BASE_GAS + MULTI_ENTRY_GAS * BigInt(multi.requestIds.length + multi.groupIds.length);
    return this.priced(verifier, setMultiRequestData(multi), gas, 'setMultiRequest', 'a bound on its storage', alsoSpends);
  }

  /** `alsoSpends`: what the deploy's other send may cost, so the balance is checked for both. */
  private async priced(verifier: Address, data: Hex, gas: bigint, call: string, basis: string, alsoSpends = 0n): Promise<UnsignedSend> {
    const [fees, block, balance] = await Promise.all([this.fees(), this.client.getBlock({ blockTag: 'latest' }), this.balance()]);
    const cap = block.gasLimit < this.maxGas ? block.gasLimit : this.maxGas;
    if (gas > cap) {
      const by = cap === this.maxGas ? `CHAIN_DEPLOY_MAX_GAS (${this.maxGas})` : `the latest block's gas limit (${block.gasLimit})`;
      throw new DeployRefusal(`${call} on ${this.endpoint.chain} needs ${gas} gas (${basis}), above ${by}: deploy fewer rules at once`, 'gas');
    }
    const cost = gas * fees.maxFeePerGas + alsoSpends;
    if (cost > balance) {
      throw new DeployRefusal(`the deployer ${this.account.address} on ${this.endpoint.chain} holds ${balance} wei, less than this deploy may cost (${cost} wei): fund it`, 'funds');
    }
    return { to: verifier, data, gas: String(gas), maxFeePerGas: String(fees.maxFeePerGas), maxPriorityFeePerGas: String(fees.maxPriorityFeePerGas) };
  }

  /** A zero-value transfer to itself: signed with a refused send's nonce, it lets the later ones be mined. */
  async filler(): Promise<UnsignedSend> {
    const fees = await this.fees();
    return {
      to: this.account.address, data: '0x', gas: String(TRANSFER_GAS),
      maxFeePerGas: String(fees.maxFeePerGas), maxPriorityFeePerGas: String(fees.maxPriorityFeePerGas),
    };
  }

  /** Twice the base fee and the tip, capped; refused when the base fee and tip alone pass the cap. */
  async fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const [block, tip] = await Promise.all([this.client.getBlock({ blockTag: 'latest' }), this.client.estimateMaxPriorityFeePerGas()]);
    const base = block.baseFeePerGas ?? 0n;
    if (base + tip > this.maxFeePerGas) {
      throw new DeployRefusal(`gas costs ${base + tip} wei on ${this.endpoint.chain} (base fee and tip), above CHAIN_MAX_FEE_PER_GAS ${this.maxFeePerGas}`, 'fee');
    }
    const max = 2n * base + tip;
    return { maxFeePerGas: max > this.maxFeePerGas ? this.maxFeePerGas : max, maxPriorityFeePerGas: tip };
  }

  /** The next nonce the chain expects: `pending` counts what the node holds unmined too. */
  nonce(blockTag: 'pending' | 'latest'): Promise<number> {
    return this.client.getTransactionCount({ address: this.account.address, blockTag });
  }

  async sign(tx: UnsignedSend, nonce: number): Promise<{ raw: Hex; hash: Hex }> {
    const raw = await this.account.signTransaction({
      type: 'eip1559', chainId: this.endpoint.chainId, nonce, to: tx.to, data: tx.data, gas: BigInt(tx.gas),
      maxFeePerGas: BigInt(tx.maxFeePerGas), maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas),
    });
    return { raw, hash: keccak256(raw) };
  }

  /**
   * A node that holds it already, or mined it, is an answer too. A node that takes no gap in nonces (Hardhat while
   * automining) is asked again briefly: the nonce before it is another deploy's, on its way.
   */
  async broadcast(raw: Hex): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.request({ method: 'eth_sendRawTransaction', params: [raw] });
        return;
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        if (/already known|known transaction|nonce too low|already imported/i.test(text)) return;
        if (!/nonce too high/i.test(text) || attempt >= GAP_RETRIES) throw err;
        await sleep(GAP_RETRY_MS);
      }
    }
  }

  balance(): Promise<bigint> {
    return this.client.getBalance({ address: this.account.address });
  }
}

/**
 * No word on the deploy (a timeout, a limit, an HTTP error, any failure without evidence of a revert): 503 in the
 * node's words (shortMessage, no RPC URL). Only a revert or a validator's empty answer is the chain's word (422).
 */
class ChainUnanswered extends Error {
  readonly shortMessage: string;

  constructor(err: unknown, chain: string, timeoutMs: number) {
    const words = classify(err, chain, timeoutMs).message;
    super(words);
    this.shortMessage = words;
  }
}

/** The validator answered getSupportedCircuitIds with nothing, or with what does not decode as its answer. */
function answeredNoCircuits(err: unknown): boolean {
  return err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionZeroDataError || (e instanceof Error && e.name.startsWith('AbiDecoding'))) !== null;
}

function revertReason(err: unknown): string {
  if (err instanceof BaseError) {
    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data !== undefined) {
      const args = (reverted.data.args ?? []).map((a) => String(a)).join(', ');
      return `${reverted.data.errorName}(${args})`;
    }
    return err.shortMessage;
  }
  return err instanceof Error ? err.message : String(err);
}
