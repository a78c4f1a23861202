/** Chain read failures in words: the reasons a rule answers never quote a transport code. */
import { describe, expect, it } from 'vitest';
import { HttpRequestError, InternalRpcError, RpcRequestError, getContractError, type Abi } from 'viem';
import { classify, revertDataOf } from '../../src/chain/rpc-errors.js';

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

/** What viem 2.57 throws for a JSON-RPC error, with `status` when the HTTP answer was not 2xx. */
const rpcError = (status: number | undefined, code: number, message: string, data?: string) =>
  new RpcRequestError({ body: {}, url: 'http://127.0.0.1:1/secret-key', ...(status !== undefined && { status }), error: { code, message, ...(data !== undefined && { data }) } });

describe('a node that answers without answering the call', () => {
  it.each([
    [429, -32005, 'limit exceeded', 'unreachable'],
    [503, -32603, 'internal error', 'unreachable'],
    [undefined, -32000, 'execution aborted (timeout = 5s)', 'timeout'],
    [undefined, -32000, 'header not found', 'unreachable'],
    [undefined, -32007, '100/second request limit reached', 'unreachable'],
    [undefined, -32602, 'invalid argument 0: hex string has length 3', 'rpc-error'],
    [undefined, 3, 'execution reverted: rate limit', 'rpc-error'],
    // A revert is the chain's answer even with an HTTP error status (a proxy's): not a 503 asked again for ever.
    [500, 3, 'execution reverted', 'rpc-error'],
    [502, -32000, 'execution reverted: ValidatorIsNotWhitelisted', 'rpc-error'],
  ] as const)('HTTP %s, error %i "%s": %s, in the node\'s words without the URL', (status, code, message, expected) => {
    const e = classify(rpcError(status, code, message), 'eip155:1', 3000);
    expect(e.code).toBe(expected);
    expect(e.message).toContain(message);
    expect(e.message).not.toContain('secret-key');
  });

  it('revertDataOf: a revert only on the node\'s word, never on viem\'s name for an internal error', () => {
    const abi: Abi = [{ type: 'function', name: 'setRequests', stateMutability: 'nonpayable', inputs: [], outputs: [] }];
    // viem wraps a -32603 in ContractFunctionRevertedError ("reverted with the following reason: internal error").
    const wrapped = (e: RpcRequestError) => getContractError(new InternalRpcError(e), { abi, functionName: 'setRequests', args: [] });
    expect(wrapped(rpcError(undefined, -32603, 'internal error')).shortMessage).toMatch(/reverted/);
    expect(revertDataOf(wrapped(rpcError(undefined, -32603, 'internal error')))).toBeUndefined();
    expect(revertDataOf(wrapped(rpcError(503, -32603, 'internal error', '0x12345678')))).toBeUndefined();
    expect(revertDataOf(wrapped(rpcError(503, -32603, 'execution reverted', '0x12345678')))).toBe('0x12345678');
    // Nethermind and OpenEthereum: the revert in a text data field.
    expect(revertDataOf(rpcError(undefined, -32015, 'VM execution error.', 'Reverted 0x'))).toBe('0x');
    expect(revertDataOf(rpcError(429, -32005, 'limit exceeded'))).toBeUndefined();
    // Hardhat's and geth's reverts.
    expect(revertDataOf(wrapped(rpcError(undefined, -32603, "VM Exception while processing transaction: reverted with custom error 'X()'", '0xabcdef12')))).toBe('0xabcdef12');
    expect(revertDataOf(rpcError(undefined, -32000, 'execution reverted'))).toBe('0x');
    expect(revertDataOf(rpcError(undefined, 3, 'execution reverted', '0x08c379a0'))).toBe('0x08c379a0');
  });
});
