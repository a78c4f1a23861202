/** No redirects: the URLs come from credentials, so a redirect could point anywhere. */
import { fieldAt } from './structure.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export class FetchFailure extends Error {
  override name = 'FetchFailure';
  constructor(
    message: string,
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

export interface JsonRequest {
  url: string;
  method?: 'GET' | 'POST';
  body?: unknown;
  timeoutMs: number;
  maxBytes: number;
  accept?: string;
}

function describeNetworkError(e: unknown, timeoutMs: number): string {
  const name = fieldAt(e, 'name');
  if (name === 'TimeoutError' || name === 'AbortError' || fieldAt(e, 'cause', 'name') === 'TimeoutError') {
    return `no answer within ${timeoutMs} ms`;
  }
  const code = fieldAt(e, 'cause', 'code');
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET': return 'connection reset';
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
    case 'EPIPE': return 'connection closed by the server';
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return 'host name not resolved';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH': return 'host unreachable';
    case undefined: return 'request failed';
    default: return `request failed (${String(code)})`;
  }
}

/** The body as text, refused past maxBytes (the follower's JSON-RPC answers read it too). */
export async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw new FetchFailure(`answer larger than ${maxBytes} bytes`);
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new FetchFailure(`answer larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A pooled connection the server closed just as it was reused: the request never reached the application. */
function isStaleConnection(e: unknown): boolean {
  const code = fieldAt(e, 'cause', 'code');
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED';
}

/** The requests made here only read, so a stale-connection failure is retried once. */
export async function fetchJson(fetchImpl: FetchLike, req: JsonRequest): Promise<unknown> {
  const signal = AbortSignal.timeout(req.timeoutMs);
  let res: Response | undefined;
  for (let attempt = 1; res === undefined; attempt++) {
    try {
      const accept = req.accept ?? 'application/json';
      res = await fetchImpl(req.url, {
        method: req.method ?? 'GET',
        headers: req.body === undefined ? { accept } : { accept, 'content-type': 'application/json' },
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        redirect: 'manual',
        signal,
      });
    } catch (e) {
      if (attempt === 1 && isStaleConnection(e) && !signal.aborted) continue;
      throw new FetchFailure(describeNetworkError(e, req.timeoutMs));
    }
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => undefined);
    throw new FetchFailure(`redirect (HTTP ${res.status}) not followed`, res.status);
  }
  let text: string;
  try {
    text = await readCapped(res, req.maxBytes);
  } catch (e) {
    if (e instanceof FetchFailure) throw e;
    throw new FetchFailure(describeNetworkError(e, req.timeoutMs));
  }
  if (res.status < 200 || res.status >= 300) throw new FetchFailure(`HTTP ${res.status}`, res.status);
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    throw new FetchFailure('answer is not JSON', res.status);
  }
}
