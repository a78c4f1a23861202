/** The pure half: deployment choice and outcomes from given statuses, and evaluateOnChainRules with a fake reader. */
import { describe, expect, it } from 'vitest';
import {
  evaluateOnChainRules, resolveVerifierTarget, ruleOutcomes, type ProofStatusEntry, type ProofStatusReader,
} from '../../src/chain/index.js';
import type { SmartContractDeployment } from '../../src/domain/deployments.js';
import type { QueryConfiguration } from '../../src/schemas/scenario.js';

const V = '0x52908400098527886E0F7030069857D2E4169EE7';
const SENDER = '0x8617E340B3D01FA5F11F306F4090FD50E238070D';
const has = (...chains: string[]) => ({ hasChain: (c: string) => chains.includes(c) });
const qc = (id: string, requestId?: number): QueryConfiguration =>
  ({ id, query: requestId === undefined ? { type: 'IDInformation', operator: '$noop' } : { type: 'IDInformation', requestId, operator: '$noop' } });
const dep = (o: Record<string, unknown> = {}) => ({ id: 'd', status: 'Deployed', address: V, chain: 'eip155:1', ...o }) as SmartContractDeployment;

describe('resolveVerifierTarget', () => {
  it('takes the last usable deployment, with the deployment block as fromBlock', () => {
    const t = resolveVerifierTarget([
      dep({ id: 'a', address: '0x0000000000000000000000000000000000000001' }),
      dep({
        id: 'b', transactions: [
          { id: 't1', status: 'TxFailed', blockNumber: 5 }, { id: 't2', status: 'TxConfirmed', txHash: '0x1', blockNumber: 9 },
          { id: 't3', status: 'TxConfirmed', txHash: '0x2', blockNumber: 12 },
        ],
      }),
      dep({ id: 'c', status: 'Deprecated' }),
    ], has('eip155:1'));
    expect(t).toEqual({ ok: true, chain: 'eip155:1', address: V, deploymentId: 'b', fromBlock: 9 });
  });

  it('explains why there is none', () => {
    const t = resolveVerifierTarget([dep({ status: 'Deployed', address: null }), dep({ id: 'e', address: 'tz1abc' }), dep({ id: 'f', status: undefined })], has('eip155:1'));
    expect(t).toEqual({
      ok: false, chain: null, address: null,
      reasons: [
        'the scenario has no usable smart contract deployment (one with status Deployed and a contract address)',
        'deployment "d" is Deployed but has no address',
        'deployment "e" has an address that is not an EVM address',
        'deployment "f" has no status',
      ],
    });
  });

  it('needs a chain with an RPC endpoint', () => {
    expect(resolveVerifierTarget([dep({ chain: undefined })], has('eip155:1'))).toMatchObject({ ok: false, reasons: [expect.stringContaining('no default chain')] });
    expect(resolveVerifierTarget([dep({ chain: undefined })], { ...has('eip155:1'), defaultChain: 'eip155:1' })).toMatchObject({ ok: true });
    expect(resolveVerifierTarget([dep({ chain: 'polygon' })], has('eip155:1'))).toMatchObject({ ok: false, reasons: [expect.stringContaining('not an EVM CAIP-2')] });
    expect(resolveVerifierTarget([dep({ chain: 'eip155:2' })], has('eip155:1'))).toMatchObject({ ok: false, chain: 'eip155:2', address: V });
  });
});

describe('ruleOutcomes', () => {
  const target = { ok: true as const, chain: 'eip155:1', address: V, deploymentId: 'd' };
  it('maps each status to valid, not-valid or error', () => {
    const statuses: ProofStatusEntry[] = [
      { requestId: 1, verified: true, blockNumber: 100n, txHash: '0xabc', method: 'getRequestProofStatus', cached: false },
      { requestId: 2, verified: false, blockNumber: 100n, method: 'getRequestProofStatus', cached: true },
      { requestId: 3, error: 'eip155:1 did not answer within 3000 ms', code: 'timeout' },
      { requestId: 4, error: 'x', code: 'request-not-found', blockNumber: 100n },
    ];
    const out = ruleOutcomes([qc('a', 1), qc('b', 2), qc('c', 3), qc('d', 4), qc('e', 5), qc('f')], target, SENDER, statuses);
    expect(out).toEqual([
      { objectId: 'a', requestId: '1', status: 'valid', is_valid: true, reasons: [], txHash: '0xabc', scenarioVerifierAddress: V, chain: 'eip155:1', blockNumber: 100 },
      {
        objectId: 'b', requestId: '2', status: 'not-valid', is_valid: false, scenarioVerifierAddress: V, chain: 'eip155:1', blockNumber: 100,
        reasons: [`verifier ${V} (eip155:1) holds no verified proof of request 2 from ${SENDER} at block 100`],
      },
      {
        objectId: 'c', requestId: '3', status: 'error', is_valid: false, scenarioVerifierAddress: V, chain: 'eip155:1', blockNumber: null,
        reasons: [`could not read the proof status of request 3 from verifier ${V} (eip155:1): eip155:1 did not answer within 3000 ms`],
      },
      {
        objectId: 'd', requestId: '4', status: 'error', is_valid: false, scenarioVerifierAddress: V, chain: 'eip155:1', blockNumber: 100,
        reasons: [`request 4 is not set on verifier ${V} (eip155:1): the scenario's requestId does not match the contract`],
      },
      {
        objectId: 'e', requestId: '5', status: 'error', is_valid: false, scenarioVerifierAddress: V, chain: 'eip155:1', blockNumber: null,
        reasons: ['the proof status of request 5 was not read'],
      },
      {
        objectId: 'f', requestId: null, status: 'error', is_valid: false, scenarioVerifierAddress: V, chain: 'eip155:1', blockNumber: null,
        reasons: ['the query configuration has no requestId, so there is no on-chain proof to look up'],
      },
    ]);
  });
});

describe('evaluateOnChainRules with a fake reader', () => {
  it('reads each requestId once and survives a reader that rejects', async () => {
    const calls: unknown[] = [];
    const fake: ProofStatusReader = {
      defaultChain: 'eip155:1',
      hasChain: (c) => c === 'eip155:1',
      async readProofStatuses(r) {
        calls.push(r);
        throw new Error('boom');
      },
    };
    const out = await evaluateOnChainRules(fake, { queryConfigurations: [qc('a', 1), qc('b', 1), qc('c', 2)], smartContractDeployments: [dep()], address: SENDER });
    expect(calls).toEqual([{ chain: 'eip155:1', verifierAddress: V, sender: SENDER, requestIds: [1, 2], fromBlock: undefined }]);
    expect(out.map((o) => o.status)).toEqual(['error', 'error', 'error']);
    expect(out[0]?.reasons[0]).toContain('the chain read failed: boom');
  });

  it('does not read when there is nothing to read', async () => {
    let read = 0;
    const fake: ProofStatusReader = { defaultChain: undefined, hasChain: () => true, readProofStatuses: async () => { read++; return []; } };
    await evaluateOnChainRules(fake, { queryConfigurations: [qc('a')], smartContractDeployments: [dep()], address: SENDER });
    await evaluateOnChainRules(fake, { queryConfigurations: [qc('a', 1)], smartContractDeployments: [], address: SENDER });
    expect(read).toBe(0);
  });
});
