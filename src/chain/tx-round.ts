/**
 * One JSON-RPC batch (an array in one HTTP request) per chain and poll: the head, the receipts of every pending
 * transaction and what deciding them needs. No viem: the follower loads it only to name a revert (revertReason).
 */

type Hex = `0x${string}`;

export interface RoundAsk {
  /** Every pending transaction. */
  receipts: readonly string[];
  /** Whose sender, nonce and call are needed (no receipt yet, or to replay or address it). */
  transactions: readonly string[];
  /** Heights of receipts seen in an earlier round: their block's hash and time. */
  blocks: readonly bigint[];
  /** Senders of transactions without a receipt: a nonce past theirs drops them. */
  nonces: readonly string[];
  /** Reverted transactions, replayed with eth_call at their block for the revert data. */
  replays: readonly { hash: string; call: Record<string, unknown>; block: bigint }[];
}

interface RoundReceipt {
  blockNumber: bigint;
  blockHash: string;
  reverted: boolean;
  to: string | null;
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
  receipts: Map<string, RoundReceipt | null>;
  transactions: Map<string, RoundTransaction | null>;
  blocks: Map<bigint, { hash: string; timestamp: number } | null>;
  nonces: Map<string, bigint>;
  /** The revert data ('0x' for none), or why the replay did not revert. */
  replays: Map<string, { data: Hex } | { error: string }>;
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

/** Rejects when the endpoint does not answer or answers no batch; one call's error is that call's answer. */
export async function txRound(url: string, ask: RoundAsk, timeoutMs: number): Promise<RoundAnswer> {
  const calls: { method: string; params: unknown[] }[] = [{ method: 'eth_chainId', params: [] }, { method: 'eth_blockNumber', params: [] }];
  const at = (method: string, params: unknown[]) => calls.push({ method, params }) - 1;
  const receipts = ask.receipts.map((h) => [h, at('eth_getTransactionReceipt', [h])] as const);
  const transactions = ask.transactions.map((h) => [h, at('eth_getTransactionByHash', [h])] as const);
  const blocks = ask.blocks.map((b) => [b, at('eth_getBlockByNumber', [hexOf(b), false])] as const);
  const nonces = ask.nonces.map((a) => [a, at('eth_getTransactionCount', [a, 'latest'])] as const);
  const replays = ask.replays.map((r) => [r, at('eth_call', [r.call, hexOf(r.block)])] as const);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, ...c }))),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new Error(`the RPC endpoint answered HTTP ${response.status}`);
  const body: unknown = await response.json();
  if (!Array.isArray(body)) throw new Error('the RPC endpoint answered no JSON-RPC batch');
  const byId = new Map<number, RpcAnswer>();
  for (const a of body) if (isRecord(a) && typeof a.id === 'number') byId.set(a.id, a as unknown as RpcAnswer);
  const result = (i: number) => {
    const a = byId.get(i);
    if (a === undefined) throw new Error(`the RPC endpoint left call ${calls[i]?.method} unanswered`);
    if (a.error !== undefined) throw new Error(`${calls[i]?.method} failed: ${short(a.error.message)}`);
    return a.result;
  };
  const head = big(result(1));
  const chainId = big(result(0));
  if (head === undefined || chainId === undefined) throw new Error('the RPC endpoint answered no block number');
  const answer: RoundAnswer = {
    chainId: Number(chainId), head, receipts: new Map(), transactions: new Map(), blocks: new Map(), nonces: new Map(), replays: new Map(),
  };
  receipts.forEach(([h, k]) => {
    const r = result(k);
    const blockNumber = isRecord(r) ? big(r.blockNumber) : undefined;
    answer.receipts.set(h, isRecord(r) && blockNumber !== undefined && typeof r.blockHash === 'string'
      ? { blockNumber, blockHash: r.blockHash, reverted: r.status === '0x0', to: typeof r.to === 'string' ? r.to : null }
      : null);
  });
  transactions.forEach(([h, k]) => {
    const t = result(k);
    const nonce = isRecord(t) ? big(t.nonce) : undefined;
    answer.transactions.set(h, isRecord(t) && nonce !== undefined && typeof t.from === 'string'
      ? { from: t.from, nonce, to: typeof t.to === 'string' ? t.to : null, input: String(t.input ?? '0x'), value: String(t.value ?? '0x0'), gas: String(t.gas ?? '0x0') }
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
    const data = a?.error === undefined ? undefined : revertData(a.error);
    answer.replays.set(r.hash, data !== undefined ? { data } : { error: a?.error ? short(a.error.message) : 'the replay did not revert' });
  });
  return answer;
}
