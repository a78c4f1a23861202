/**
 * Verified like any other answer, so the contract is not believed either. Messages never quote an RPC URL: it may
 * carry an API key.
 */
import type { Address, PublicClient } from 'viem';
import type { ChainEndpoint, ChainSettings } from '../chain/config.js';
import { loadViem } from '../chain/lazy.js';
import { toChecksumAddress } from '../domain/address.js';
import { ResolverFailure } from './did-resolver.js';
import { DID, Hash, isGenesisState } from './iden3.js';
import { StatusFailure, verifyStatusAnswer, type StatusResolverFn } from './revocation.js';
import { isEvmAddress } from './structure.js';

const MTP_COMPONENTS = [
  { name: 'root', type: 'uint256' },
  { name: 'existence', type: 'bool' },
  { name: 'siblings', type: 'uint256[]' },
  { name: 'index', type: 'uint256' },
  { name: 'value', type: 'uint256' },
  { name: 'auxExistence', type: 'bool' },
  { name: 'auxIndex', type: 'uint256' },
  { name: 'auxValue', type: 'uint256' },
] as const;

const STATUS_OUTPUT = [
  {
    name: '',
    type: 'tuple',
    components: [
      {
        name: 'issuer',
        type: 'tuple',
        components: [
          { name: 'state', type: 'uint256' },
          { name: 'claimsTreeRoot', type: 'uint256' },
          { name: 'revocationTreeRoot', type: 'uint256' },
          { name: 'rootOfRoots', type: 'uint256' },
        ],
      },
      { name: 'mtp', type: 'tuple', components: MTP_COMPONENTS },
    ],
  },
] as const;

/** IOnchainCredentialStatusResolver (iden3 contracts). */
const ONCHAIN_STATUS_ABI = [
  {
    type: 'function',
    name: 'getRevocationStatus',
    stateMutability: 'view',
    inputs: [{ name: 'id', type: 'uint256' }, { name: 'nonce', type: 'uint64' }],
    outputs: STATUS_OUTPUT,
  },
  {
    type: 'function',
    name: 'getRevocationStatusByIdAndState',
    stateMutability: 'view',
    inputs: [{ name: 'id', type: 'uint256' }, { name: 'state', type: 'uint256' }, { name: 'nonce', type: 'uint64' }],
    outputs: STATUS_OUTPUT,
  },
] as const;

interface OnchainCredentialStatus {
  issuer: { state: bigint; claimsTreeRoot: bigint; revocationTreeRoot: bigint; rootOfRoots: bigint };
  mtp: {
    root: bigint;
    existence: boolean;
    siblings: readonly bigint[];
    index: bigint;
    value: bigint;
    auxExistence: boolean;
    auxIndex: bigint;
    auxValue: bigint;
  };
}

/** credentialStatus.id: `<issuer DID>/credentialStatus?revocationNonce=<n>&contractAddress=<chain id>:<0x address>&state=<hex>`. */
export interface OnchainStatusLocation {
  chain: string;
  chainId: number;
  contract: Address;
  state?: string;
  nonce?: bigint;
}

export interface OnchainStatusOptions {
  timeoutMs?: number;
  retryCount?: number;
  clientFor?: (endpoint: ChainEndpoint, timeoutMs: number) => PublicClient;
}

const HASH_HEX = /^[0-9a-f]{64}$/;
const UINT64_MAX = 2n ** 64n - 1n;
const MAX_SIBLINGS = 256;

export function parseOnchainStatusId(id: unknown): OnchainStatusLocation {
  if (typeof id !== 'string' || !id.startsWith('did:')) throw new StatusFailure('credentialStatus.id is not a DID URL');
  const q = id.indexOf('?');
  if (q < 0) throw new StatusFailure('credentialStatus.id has no contractAddress parameter');
  const params = new URLSearchParams(id.slice(q + 1).split('#')[0]);
  const contractParam = params.get('contractAddress');
  if (contractParam === null) throw new StatusFailure('credentialStatus.id has no contractAddress parameter');
  const m = /^([1-9][0-9]{0,15}):(0x[0-9a-fA-F]{40})$/.exec(contractParam.trim());
  const chainDigits = m?.[1];
  const contract = m?.[2];
  if (chainDigits === undefined || contract === undefined) {
    throw new StatusFailure('credentialStatus.id: contractAddress must be <chain id>:<0x address>');
  }
  const chainId = Number(chainDigits);
  if (!Number.isSafeInteger(chainId)) throw new StatusFailure('credentialStatus.id: the chain id is out of range');
  const checksummed = toChecksumAddress(contract);
  if (!isEvmAddress(checksummed)) throw new StatusFailure('credentialStatus.id: contractAddress must be <chain id>:<0x address>');
  const location: OnchainStatusLocation = { chain: `eip155:${chainId}`, chainId, contract: checksummed };
  const state = params.get('state');
  if (state !== null && state !== '') {
    if (!HASH_HEX.test(state)) throw new StatusFailure('credentialStatus.id: state must be a 32-byte hex hash');
    location.state = state;
  }
  const nonce = params.get('revocationNonce');
  if (nonce !== null && nonce !== '') {
    if (!/^\d{1,20}$/.test(nonce) || BigInt(nonce) > UINT64_MAX) throw new StatusFailure('credentialStatus.id: revocationNonce is not a uint64');
    location.nonce = BigInt(nonce);
  }
  return location;
}

function statusDocumentFromContract(answer: OnchainCredentialStatus): {
  issuer: { state: string; claimsTreeRoot: string; revocationTreeRoot: string; rootOfRoots: string };
  mtp: { existence: boolean; siblings: string[]; node_aux?: { key: string; value: string } };
} {
  const { issuer, mtp } = answer;
  if (mtp.siblings.length > MAX_SIBLINGS) throw new StatusFailure('the contract answered a Merkle proof with too many siblings');
  const hex = (x: bigint) => {
    try {
      return Hash.fromBigInt(x).hex();
    } catch {
      throw new StatusFailure('the contract answered a tree root that is not a field element');
    }
  };
  return {
    issuer: {
      state: hex(issuer.state),
      claimsTreeRoot: hex(issuer.claimsTreeRoot),
      revocationTreeRoot: hex(issuer.revocationTreeRoot),
      rootOfRoots: hex(issuer.rootOfRoots),
    },
    mtp: {
      existence: mtp.existence,
      // Contracts pad the siblings with zeros to the tree's maximum depth; the proof's depth is that of its last
      // non-zero sibling (js-merkletree's Proof drops the padding).
      siblings: mtp.siblings.map((s) => s.toString()),
      ...(mtp.auxExistence ? { node_aux: { key: mtp.auxIndex.toString(), value: mtp.auxValue.toString() } } : {}),
    },
  };
}

function describe({ BaseError, ContractFunctionRevertedError }: typeof import('viem'), e: unknown, chain: string): string {
  if (e instanceof BaseError) {
    if (e.walk((x) => x instanceof ContractFunctionRevertedError)) return `the status contract on ${chain} reverted`;
    const name = e.walk((x) => x instanceof BaseError && /Timeout/.test(x.name))
      ? 'did not answer in time'
      : 'could not be read';
    return `the status contract on ${chain} ${name}`;
  }
  return `the status contract on ${chain} could not be read`;
}

function reverted({ BaseError, ContractFunctionRevertedError }: typeof import('viem'), e: unknown): boolean {
  return e instanceof BaseError && e.walk((x) => x instanceof ContractFunctionRevertedError) !== null;
}

/** One viem client per configured chain, made now; with no chain, viem is not loaded and every status is an error. */
export async function onchainStatusResolver(chains: Pick<ChainSettings, 'chains' | 'timeoutMs'>, options: OnchainStatusOptions = {}): Promise<StatusResolverFn> {
  const timeoutMs = options.timeoutMs ?? chains.timeoutMs;
  const viem = chains.chains.size === 0 ? undefined : (await loadViem()).viem;
  const clients = new Map<string, PublicClient>();
  if (viem !== undefined) {
    for (const endpoint of chains.chains.values()) {
      const client = options.clientFor
        ? options.clientFor(endpoint, timeoutMs)
        : viem.createPublicClient({ transport: viem.http(endpoint.url, { timeout: timeoutMs, retryCount: options.retryCount ?? 0 }) });
      clients.set(endpoint.chain, client);
    }
  }

  return async ({ status, nonce, issuerDid }, io) => {
    const where = parseOnchainStatusId(status.id);
    if (where.nonce !== undefined && where.nonce !== nonce) {
      throw new StatusFailure('the revocationNonce of credentialStatus.id is not the credential\'s revocation nonce');
    }
    if (nonce > UINT64_MAX) throw new StatusFailure('the revocation nonce is not a uint64');
    const client = clients.get(where.chain);
    if (client === undefined || viem === undefined) {
      throw new StatusFailure(`the status contract is on ${where.chain}, which is not configured (CHAIN_RPC_URLS)`);
    }

    let did: ReturnType<typeof DID.parse>;
    let id: bigint;
    try {
      did = DID.parse(issuerDid);
      id = DID.idFromDID(did).bigInt();
    } catch {
      throw new StatusFailure('the issuer DID is not an iden3 DID');
    }

    const read = (state: string | undefined): Promise<OnchainCredentialStatus> => state === undefined
      ? client.readContract({ address: where.contract, abi: ONCHAIN_STATUS_ABI, functionName: 'getRevocationStatus', args: [id, nonce] })
      : client.readContract({
        address: where.contract,
        abi: ONCHAIN_STATUS_ABI,
        functionName: 'getRevocationStatusByIdAndState',
        args: [id, Hash.fromHex(state).bigInt(), nonce],
      });

    let latest: string | undefined;
    if (io.stateResolver.configured) {
      try {
        latest = await io.stateResolver.latestState(issuerDid);
      } catch (e) {
        throw e instanceof ResolverFailure ? e : new StatusFailure("the issuer's latest state could not be resolved");
      }
    }

    let asked = latest;
    let answer: OnchainCredentialStatus;
    try {
      answer = await read(asked);
    } catch (e) {
      let genesis = false;
      try {
        genesis = latest === undefined && where.state !== undefined && isGenesisState(did, where.state);
      } catch {
        genesis = false;
      }
      if (!(genesis && reverted(viem, e))) throw new StatusFailure(describe(viem, e, where.chain));
      asked = where.state;
      try {
        answer = await read(asked);
      } catch (e2) {
        throw new StatusFailure(describe(viem, e2, where.chain));
      }
    }

    const doc = statusDocumentFromContract(answer);
    if (asked !== undefined && doc.issuer.state !== asked) {
      throw new StatusFailure('the status contract answered about another issuer state than the one asked');
    }
    if (answer.mtp.root !== answer.issuer.revocationTreeRoot) {
      throw new StatusFailure("the status contract's Merkle proof root is not its revocation tree root");
    }
    if (answer.mtp.index !== 0n && answer.mtp.index !== nonce) {
      throw new StatusFailure("the status contract's Merkle proof is not about this revocation nonce");
    }
    return verifyStatusAnswer(doc, nonce);
  };
}
