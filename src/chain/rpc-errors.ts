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

/** '0x' for a revert without data. */
export function revertDataOf(err: unknown): Hex | undefined {
  if (!(err instanceof BaseError)) return undefined;
  if (err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) return undefined;
  let data: Hex | undefined;
  let revert = false;
  err.walk((e) => {
    const x = isRecord(e) ? e : {};
    if (x.code === 3) revert = true;
    if ((typeof x.details === 'string' && /revert/i.test(x.details)) || (typeof x.message === 'string' && /revert/i.test(x.message))) revert = true;
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
    if (rpc instanceof RpcRequestError) return new ChainReadError('rpc-error', `${chain} RPC error ${rpc.code}: ${plain(rpc.details || rpc.shortMessage)}`);
    return new ChainReadError('rpc-error', `${chain} read failed: ${plain(err.shortMessage)}`);
  }
  return new ChainReadError('rpc-error', `${chain} read failed: ${plain(err instanceof Error ? err.message : String(err))}`);
}

/** An error's text for a log line or an answer: the node's or the transport's words, never the RPC URL or a request body. */
export function chainErrorText(err: unknown, chain: string): string {
  if (err instanceof Error && 'statusCode' in err) return err.message;
  return classify(err, chain, 0).message;
}
