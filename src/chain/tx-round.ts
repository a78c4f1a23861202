/**
 * A chain's round of JSON-RPC calls: the head, the receipts of the pending transactions and what deciding them needs,
 * as batches (arrays in one HTTP request) of at most `batchLimit` calls each. No viem: the follower loads it only to
 * name a revert (revertReason).
 */

import { readCapped } from '../trust/http.js';

type Hex = `0x${string}`;

export interface RoundAsk {
  /** Every pending transaction. */
  receipts: readonly string[];
  /** Whose sender, nonce and call are needed (no receipt yet, or to replay or address it). */
  transactions: readonly string[];
  /** Heights of receipts seen in an earlier round: their block's hash and time. */
  blocks: readonly bigint[];
  /** Senders of transactions without a receipt, and the height their nonce is read at. */
  nonces: readonly string[];
  nonceBlock?: bigint;
  /** Reverted transactions, replayed with eth_call at their block for the revert data. */
  replays: readonly { hash: string; call: Record<string, unknown>; block: bigint }[];
}

interface RoundReceipt {
  blockNumber: bigint;
  blockHash: string;
  reverted: boolean;
  to: string | null;
  contractAddress: string | null;
}

interface RoundTransaction {
  from: string;
  nonce: bigint;
  to: string | null;
  input: string;
  value: string;
  gas: string;
}

export interface RoundAnswer {
  chainId: number;
  head: bigint;
  /** A hash whose call failed is absent: unknown this round. */
  receipts: Map<string, RoundReceipt | null>;
  transactions: Map<string, RoundTransaction | null>;
  blocks: Map<bigint, { hash: string; timestamp: number } | null>;
  nonces: Map<string, bigint>;
  /** The revert data ('0x' for none), or why the replay did not revert. */
  replays: Map<string, { data: Hex } | { error: string }>;
  /** HTTP requests this round took. */
  requests: number;
}

export interface RoundOptions {
  timeoutMs: number;
  batchLimit: number;
  /** Bytes read of one HTTP answer at most. */
  maxResponseBytes: number;
}

interface RpcAnswer {
  id: number;
  result?: unknown;
  error?: { code?: number; message?: string; data?: unknown };
}

/** Not rpc-errors.ts's clip: that module loads viem. */
const short = (message: string | undefined) => (message ?? 'error').replace(/\s+/g, ' ').slice(0, 200);
const hexOf = (n: bigint) => `0x${n.toString(16)}`;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const big = (v: unknown) => (typeof v === 'string' && /^0x[0-9a-fA-F]+$/.test(v) ? BigInt(v) : undefined);

function revertData(error: RpcAnswer['error']): Hex | undefined {
  const data = isRecord(error?.data) ? error.data.data : error?.data;
  if (typeof data === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(data)) return data as Hex;
  return error?.code === 3 || /revert/i.test(error?.message ?? '') ? '0x' : undefined;
}

/** fetch refuses a URL with user:password@: they go in an Authorization header, as viem's http transport does. */
function rpcRequestTarget(url: string): { url: string; headers: Record<string, string> } {
  const u = new URL(url);
  if (u.username === '' && u.password === '') return { url, headers: {} };
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  return { url: u.toString(), headers: { authorization: `Basic ${basic}` } };
}

async function postBatch(target: ReturnType<typeof rpcRequestTarget>, calls: { method: string; params: unknown[] }[], first: number,
  options: RoundOptions, signal: AbortSignal, byId: Map<number, RpcAnswer>): Promise<void> {
  const response = await fetch(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: first + i, ...c }))),
    signal,
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`the RPC endpoint answered HTTP ${response.status}`);
  }
  const body: unknown = JSON.parse(await readCapped(response, options.maxResponseBytes));
  if (!Array.isArray(body)) {
    const error = isRecord(body) && isRecord(body.error) ? `: ${short(String(body.error.message))}` : '';
    throw new Error(`the RPC endpoint answered no JSON-RPC batch${error}`);
  }
  for (const a of body) if (isRecord(a) && typeof a.id === 'number') byId.set(a.id, a as unknown as RpcAnswer);
}

/**
 * Rejects when the endpoint does not answer, answers a batch with no array, or leaves the head unanswered; one call's
 * error is that call's answer (its hash unknown this round), never the round's.
 */
export async function txRound(url: string, ask: RoundAsk, options: RoundOptions): Promise<RoundAnswer> {
  const calls: { method: string; params: unknown[] }[] = [{ method: 'eth_chainId', params: [] }, { method: 'eth_blockNumber', params: [] }];
  const at = (method: string, params: unknown[]) => calls.push({ method, params }) - 1;
  const receipts = ask.receipts.map((h) => [h, at('eth_getTransactionReceipt', [h])] as const);
  const transactions = ask.transactions.map((h) => [h, at('eth_getTransactionByHash', [h])] as const);
  const blocks = ask.blocks.map((b) => [b, at('eth_getBlockByNumber', [hexOf(b), false])] as const);
  const nonceAt = ask.nonceBlock === undefined ? 'latest' : hexOf(ask.nonceBlock);
  const nonces = ask.nonces.map((a) => [a, at('eth_getTransactionCount', [a, nonceAt])] as const);
  const replays = ask.replays.map((r) => [r, at('eth_call', [r.call, hexOf(r.block)])] as const);
  const target = rpcRequestTarget(url);
  const signal = AbortSignal.timeout(options.timeoutMs);
  const byId = new Map<number, RpcAnswer>();
  let requests = 0;
  for (let first = 0; first < calls.length; first += options.batchLimit) {
    requests++;
    await postBatch(target, calls.slice(first, first + options.batchLimit), first, options, signal, byId);
  }
  const result = (i: number) => {
    const a = byId.get(i);
    return a === undefined || a.error !== undefined ? undefined : a.result;
  };
  const answered = (i: number) => byId.has(i) && byId.get(i)?.error === undefined;
  const chainId = big(result(0));
  const head = big(result(1));
  if (head === undefined || chainId === undefined) {
    const error = byId.get(1)?.error ?? byId.get(0)?.error;
    throw new Error(`the RPC endpoint answered no chain id or block number${error ? `: ${short(error.message)}` : ''}`);
  }
  const answer: RoundAnswer = {
    chainId: Number(chainId), head, receipts: new Map(), transactions: new Map(), blocks: new Map(), nonces: new Map(), replays: new Map(), requests,
  };
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  receipts.forEach(([h, k]) => {
    if (!answered(k)) return;
    const r = result(k);
    const blockNumber = isRecord(r) ? big(r.blockNumber) : undefined;
    answer.receipts.set(h, isRecord(r) && blockNumber !== undefined && typeof r.blockHash === 'string'
      ? { blockNumber, blockHash: r.blockHash, reverted: r.status === '0x0', to: text(r.to), contractAddress: text(r.contractAddress) }
      : null);
  });
  transactions.forEach(([h, k]) => {
    if (!answered(k)) return;
    const t = result(k);
    const nonce = isRecord(t) ? big(t.nonce) : undefined;
    answer.transactions.set(h, isRecord(t) && nonce !== undefined && typeof t.from === 'string'
      ? { from: t.from, nonce, to: text(t.to), input: String(t.input ?? '0x'), value: String(t.value ?? '0x0'), gas: String(t.gas ?? '0x0') }
      : null);
  });
  blocks.forEach(([b, k]) => {
    const block = result(k);
    const timestamp = isRecord(block) ? big(block.timestamp) : undefined;
    const found = isRecord(block) && typeof block.hash === 'string' && timestamp !== undefined;
    answer.blocks.set(b, found ? { hash: String(block.hash), timestamp: Number(timestamp) } : null);
  });
  nonces.forEach(([a, k]) => {
    const n = big(result(k));
    if (n !== undefined) answer.nonces.set(a.toLowerCase(), n);
  });
  replays.forEach(([r, k]) => {
    const a = byId.get(k);
    if (a === undefined) return;
    const data = a.error === undefined ? undefined : revertData(a.error);
    answer.replays.set(r.hash, data !== undefined ? { data } : { error: a.error ? short(a.error.message) : 'the replay did not revert' });
  });
  return answer;
}
