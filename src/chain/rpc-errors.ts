/** Messages never quote the RPC URL: it may hold an API key. */
import { BaseError, HttpRequestError, RpcRequestError, TimeoutError, type Hex } from 'viem';
import { isRecord } from '../schemas/json.js';
import type { ChainErrorCode } from './proof-status.js';

export class ChainReadError extends Error {
  constructor(readonly code: ChainErrorCode, message: string) {
    super(message);
  }
}

export function timeoutError(chain: string, timeoutMs: number): ChainReadError {
  return new ChainReadError('timeout', `${chain} did not answer within ${timeoutMs} ms`);
}

/** Failures of the endpoint rather than of one read: the chain is not asked again for a while (ChainClient). */
export const isTransportFailure = (e: ChainReadError) => e.code === 'unreachable' || e.code === 'timeout' || e.code === 'wrong-chain';

const isHex = (d: unknown): d is Hex => typeof d === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(d);

/** The node's own words: viem calls an internal error (-32603) a revert of the contract function in its wrappers. */
const nodeWords = (e: unknown): unknown => (e instanceof RpcRequestError ? e.details : e instanceof BaseError ? undefined : isRecord(e) ? e.message : undefined);
const REVERTED = /revert|gas required exceeds allowance/i;

/** '0x' for a revert without data; undefined when the node gave no answer (see classify) or no evidence of a revert. */
export function revertDataOf(err: unknown): Hex | undefined {
  if (!(err instanceof BaseError) || isTransportFailure(classify(err, '', 0))) return undefined;
  let data: Hex | undefined;
  let revert = false;
  err.walk((e) => {
    const x = isRecord(e) ? e : {};
    const words = nodeWords(e);
    if (x.code === 3 || (typeof words === 'string' && REVERTED.test(words)) || (typeof x.data === 'string' && !isHex(x.data) && REVERTED.test(x.data))) revert = true;
    if (data === undefined) {
      const d = isRecord(x.data) ? x.data.data : x.data;
      if (isHex(d)) data = d;
    }
    return false;
  });
  if (data !== undefined && (revert || data.length >= 10)) return data;
  return revert ? '0x' : undefined;
}

export function clip(s: string, n = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

const NETWORK_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  ECONNRESET: 'the connection was closed',
  UND_ERR_SOCKET: 'the connection was closed',
  EPIPE: 'the connection was closed',
};

function plain(message: string): string {
  return clip(message.replace(/\b(UND_ERR_[A-Z_]+|E[A-Z]{4,})\b/g, (c) => NETWORK_FAILURES[c] ?? 'connection failure'));
}

export function classify(err: unknown, chain: string, timeoutMs: number): ChainReadError {
  if (err instanceof ChainReadError) return err;
  if (err instanceof BaseError) {
    if (err.walk((e) => e instanceof TimeoutError)) return timeoutError(chain, timeoutMs);
    const http = err.walk((e) => e instanceof HttpRequestError);
    if (http instanceof HttpRequestError) {
      if (typeof http.status === 'number') return new ChainReadError('unreachable', `${chain} RPC endpoint answered HTTP ${http.status}`);
      let code: string | undefined;
      err.walk((e) => {
        const c = isRecord(e) ? e.code : undefined;
        if (code === undefined && typeof c === 'string') code = c;
        return false;
      });
      // In words: a transport code (UND_ERR_SOCKET, ECONNRESET) means nothing to the reader of a rule's reasons.
      const why = code === undefined ? 'network error' : NETWORK_FAILURES[code] ?? 'the connection failed';
      return new ChainReadError('unreachable', `${chain} is unreachable (${why})`);
    }
    const rpc = err.walk((e) => e instanceof RpcRequestError);
    if (rpc instanceof RpcRequestError) return rpcError(rpc, chain);
    return new ChainReadError('rpc-error', `${chain} read failed: ${plain(err.shortMessage)}`);
  }
  return new ChainReadError('rpc-error', `${chain} read failed: ${plain(err instanceof Error ? err.message : String(err))}`);
}

/**
 * Codes of a node that is limited or failing rather than answering the call (-32005 limit exceeded, -32007 and 429
 * the providers' rate limits, -1 unknown): viem retries these too. A revert is the chain's answer, whatever the code.
 */
const BUSY_CODES = new Set([-32005, -32007, 429, -1]);
const BUSY_WORDS = /limit (exceeded|reached)|rate.?limit|too many requests|capacity|header not found|try again|temporarily/i;
const TIMED_OUT = /timeout|timed out|deadline exceeded/i;

function rpcError(rpc: RpcRequestError, chain: string): ChainReadError {
  const words = plain(rpc.details || rpc.shortMessage);
  // A revert is the chain's answer even when a node or proxy sends it with an HTTP error status.
  if (rpc.code === 3 || REVERTED.test(rpc.details)) return new ChainReadError('rpc-error', `${chain} RPC error ${rpc.code}: ${words}`);
  if (rpc.status !== undefined && (rpc.status === 408 || rpc.status === 429 || rpc.status >= 500)) {
    return new ChainReadError('unreachable', `${chain} RPC endpoint answered HTTP ${rpc.status} (error ${rpc.code}: ${words})`);
  }
  if (TIMED_OUT.test(rpc.details)) return new ChainReadError('timeout', `${chain} RPC error ${rpc.code}: ${words}`);
  if (BUSY_CODES.has(rpc.code) || BUSY_WORDS.test(rpc.details)) return new ChainReadError('unreachable', `${chain} RPC error ${rpc.code}: ${words}`);
  return new ChainReadError('rpc-error', `${chain} RPC error ${rpc.code}: ${words}`);
}

/** An error's text for a log line or an answer: the node's or the transport's words, never the RPC URL or a request body. */
export function chainErrorText(err: unknown, chain: string): string {
  if (err instanceof Error && 'statusCode' in err) return err.message;
  return classify(err, chain, 0).message;
}
