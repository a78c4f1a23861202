/**
 * A real local EVM for the chain tests: Hardhat 2's in-process EDR network, served over HTTP on 127.0.0.1 (random
 * free port) by Hardhat's own JSON-RPC server, and the test contracts compiled with the solc package's bundled
 * compiler (solc-js, no download). Setup transactions go through the in-process provider, so they keep working
 * while the HTTP server is stopped.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import {
  createPublicClient, createWalletClient, custom, type Abi, type Address, type EIP1193Provider, type Hash, type Hex,
} from 'viem';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

export interface Artifact {
  abi: Abi;
  bytecode: Hex;
}

let compiled: Record<string, Artifact> | undefined;

const SETTINGS = {
  optimizer: { enabled: false }, // compiles twice as fast; gas does not matter here
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
};

/**
 * Compiles every .sol file of test/chain/contracts and contracts/ (the project's reference contracts) once (solc-js,
 * bundled compiler): seconds of CPU, so the artifacts are kept in node_modules/.cache, keyed by the sources, the
 * settings and the compiler's version, for the other test files and later runs.
 */
function compileContracts(): Record<string, Artifact> {
  if (compiled) return compiled;
  const sources: Record<string, { content: string }> = {};
  for (const dir of [path.join(here, 'contracts'), path.join(here, '../../contracts')]) {
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.sol')).sort()) {
      sources[f] = { content: fs.readFileSync(path.join(dir, f), 'utf8') };
    }
  }
  const solcVersion = (require('solc/package.json') as { version: string }).version;
  const key = createHash('sha256').update(JSON.stringify({ solcVersion, sources, settings: SETTINGS })).digest('hex').slice(0, 32);
  const cacheFile = path.join(here, '../../node_modules/.cache/scs-solc', `${key}.json`);
  try {
    compiled = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as Record<string, Artifact>;
    return compiled;
  } catch {
    // not compiled yet
  }
  const solc = require('solc') as { compile(input: string): string };
  const input = {
    language: 'Solidity',
    sources,
    settings: SETTINGS,
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const out: Record<string, Artifact> = {};
  for (const file of Object.values(output.contracts)) {
    for (const [name, c] of Object.entries(file)) out[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  }
  compiled = out;
  // Written whole under another name, then renamed: a file running in parallel never reads half of it.
  fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
  const partial = `${cacheFile}.${process.pid}`;
  fs.writeFileSync(partial, JSON.stringify(out));
  fs.renameSync(partial, cacheFile);
  return out;
}

/** A prebuilt artifact (e.g. @iden3/contracts' build) with its library placeholders. */
export type BuildArtifact = { abi: Abi; bytecode: Hex; linkReferences: Record<string, Record<string, { start: number; length: number }[]>> };

/** The bytecode of `a` with its libraries' addresses written in. */
export function link(a: BuildArtifact, libraries: Record<string, Address>): Hex {
  let code = a.bytecode.slice(2);
  for (const refs of Object.values(a.linkReferences)) {
    for (const [name, places] of Object.entries(refs)) {
      const library = libraries[name];
      if (library === undefined) throw new Error(`no address for library ${name}`);
      const address = library.slice(2).toLowerCase();
      for (const { start, length } of places) code = code.slice(0, start * 2) + address + code.slice((start + length) * 2);
    }
  }
  return `0x${code}`;
}

const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

interface JsonRpcServerLike {
  listen(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}

export interface LocalChain {
  readonly chainId: number;
  /** CAIP-2 reference of the chain, eip155:31337. */
  readonly chain: string;
  /** http://127.0.0.1:<port> while the server runs (the same port across stop/start). */
  readonly url: string;
  readonly accounts: readonly Address[];
  readonly artifacts: Record<string, Artifact>;
  deploy(name: string, args?: readonly unknown[], from?: Address): Promise<Address>;
  /** Deploys an artifact that was not compiled here (e.g. a prebuilt one from a package). */
  deployArtifact(artifact: Artifact, args?: readonly unknown[]): Promise<Address>;
  /** Writes one storage slot (hardhat_setStorageAt); `value` is 32 bytes. */
  setStorageAt(address: Address, slot: bigint, value: Hex): Promise<void>;
  /** Sends a transaction (mined at once) and answers its hash and block number. */
  write(to: Address, name: string, functionName: string, args: readonly unknown[], from?: Address): Promise<{ hash: Hash; blockNumber: bigint }>;
  blockNumber(): Promise<bigint>;
  mine(blocks?: number): Promise<void>;
  installMulticall3(): Promise<void>;
  removeMulticall3(): Promise<void>;
  /** Stops the HTTP server (the chain keeps its state). */
  stop(): Promise<void>;
  /** Starts the HTTP server again on the same port. */
  start(): Promise<void>;
}

/** `config`: another Hardhat configuration file (e.g. another chain id); one per process (Hardhat reads it once). */
export async function startLocalChain(config = path.join(here, 'hardhat.config.cjs')): Promise<LocalChain> {
  process.env.HARDHAT_CONFIG ??= config;
  const hre = require('hardhat') as { network: { provider: EIP1193Provider } };
  const { JsonRpcServer } = require('hardhat/internal/hardhat-network/jsonrpc/server') as {
    JsonRpcServer: new (config: { hostname: string; port: number; provider: EIP1193Provider }) => JsonRpcServerLike;
  };
  const provider = hre.network.provider;
  const artifacts = compileContracts();
  const transport = custom(provider);
  const publicClient = createPublicClient({ transport });
  const accounts = (await provider.request({ method: 'eth_accounts' })) as Address[];
  const [deployer] = accounts;
  if (deployer === undefined) throw new Error('the node has no accounts');
  const wallet = createWalletClient({ transport, account: deployer });
  const chainId = Number(await publicClient.getChainId());

  let server: JsonRpcServerLike | undefined;
  let port = 0;
  const start = async () => {
    if (server) return;
    const s = new JsonRpcServer({ hostname: '127.0.0.1', port, provider });
    port = (await s.listen()).port;
    server = s;
  };
  await start();

  const receipt = async (hash: Hash) => {
    const r = await publicClient.getTransactionReceipt({ hash });
    if (r.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return r;
  };

  const artifact = (name: string): Artifact => {
    const a = artifacts[name];
    if (!a) throw new Error(`no contract ${name}`);
    return a;
  };

  const chain: LocalChain = {
    chainId,
    chain: `eip155:${chainId}`,
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    accounts,
    artifacts,
    async deploy(name, args = [], from = deployer) {
      const a = artifact(name);
      const hash = await wallet.deployContract({ abi: a.abi, bytecode: a.bytecode, args, account: from, chain: null });
      const r = await receipt(hash);
      return r.contractAddress as Address;
    },
    async deployArtifact(a, args = []) {
      const hash = await wallet.deployContract({ abi: a.abi, bytecode: a.bytecode, args, account: deployer, chain: null });
      const r = await receipt(hash);
      return r.contractAddress as Address;
    },
    async setStorageAt(address, slot, value) {
      await provider.request({ method: 'hardhat_setStorageAt', params: [address, `0x${slot.toString(16)}`, value] } as never);
    },
    async write(to, name, functionName, args, from = deployer) {
      const hash = await wallet.writeContract({ address: to, abi: artifact(name).abi, functionName, args, account: from, chain: null });
      const r = await receipt(hash);
      return { hash, blockNumber: r.blockNumber };
    },
    blockNumber: () => publicClient.getBlockNumber({ cacheTime: 0 }),
    async mine(blocks = 1) {
      await provider.request({ method: 'hardhat_mine', params: [`0x${blocks.toString(16)}`] } as never);
    },
    async installMulticall3() {
      const deployed = await chain.deploy('TestMulticall3');
      const code = await publicClient.getCode({ address: deployed });
      await provider.request({ method: 'hardhat_setCode', params: [MULTICALL3_ADDRESS, code] } as never);
    },
    async removeMulticall3() {
      await provider.request({ method: 'hardhat_setCode', params: [MULTICALL3_ADDRESS, '0x'] } as never);
    },
    async stop() {
      const s = server;
      server = undefined;
      await s?.close();
    },
    start,
  };
  return chain;
}
