/** Chain read failures in words: the reasons a rule answers never quote a transport code. */
import { describe, expect, it } from 'vitest';
import { HttpRequestError, RpcRequestError } from 'viem';
import { classify } from '../../src/chain/rpc-errors.js';

const socketError = (code: string) => {
  const cause = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('other side closed'), { code }) });
  return new HttpRequestError({ url: 'http://127.0.0.1:1/secret-key', cause, details: `fetch failed: ${code}` });
};

describe('classify', () => {
  it.each([
    ['UND_ERR_SOCKET', 'the connection was closed'],
    ['ECONNRESET', 'the connection was closed'],
    ['ECONNREFUSED', 'connection refused'],
    ['ENOTFOUND', 'host not found'],
    ['UND_ERR_SOMETHING_NEW', 'the connection failed'],
  ])('%s is said in words, without the code or the URL', (code, words) => {
    const e = classify(socketError(code), 'eip155:1', 3000);
    expect(e).toMatchObject({ code: 'unreachable', message: `eip155:1 is unreachable (${words})` });
    expect(e.message).not.toContain(code);
    expect(e.message).not.toContain('secret-key');
  });

  it('takes codes out of node and library messages too', () => {
    const rpc = new RpcRequestError({ body: {}, url: 'http://127.0.0.1:1', error: { code: -32000, message: 'upstream UND_ERR_SOCKET: ECONNRESET' } });
    expect(classify(rpc, 'eip155:1', 3000).message).toBe('eip155:1 RPC error -32000: upstream the connection was closed: the connection was closed');
    expect(classify(new Error('read ETIMEDOUT'), 'eip155:1', 3000).message).toBe('eip155:1 read failed: read the connection timed out');
  });
});
