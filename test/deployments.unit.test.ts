import { describe, expect, it } from 'vitest';
import {
  checkDeploymentTransitions, checkServiceFields, deploymentBlock, keepServiceFields, DEPLOYMENT_TRANSITIONS, DeploymentStatuses, isUsableDeployment,
  TRANSACTION_TRANSITIONS, TransactionStatuses, type SmartContractDeployment, type Transaction,
} from '../src/domain/deployments.js';
import { first } from './elements.js';

const ADDR = '0x52908400098527886E0F7030069857D2E4169EE7';
const OTHER = '0x8617E340B3D01FA5F11F306F4090FD50E238070D';
const [H1, H2, H3] = ['1', '2', 'a'].map((d) => `0x${d.repeat(64)}`) as [string, string, string];
const dep = (o: Partial<SmartContractDeployment> = {}): SmartContractDeployment => ({ id: 'd1', contractName: 'ScenarioVerifier', ...o });
const tx = (o: Partial<Transaction> = {}): Transaction => ({ id: 't1', actionName: 'ScenarioDeploy', ...o });
const check = (before: SmartContractDeployment[], after: SmartContractDeployment[]) => checkDeploymentTransitions(before, after);

describe('isUsableDeployment', () => {
  it('needs status Deployed and an EVM address', () => {
    expect(isUsableDeployment(dep({ status: 'Deployed', address: ADDR }))).toBe(true);
    expect(isUsableDeployment(dep({ status: 'Deployed', address: ADDR.toLowerCase() }))).toBe(true);
    expect(isUsableDeployment(dep({ status: 'Deployed', address: null }))).toBe(false);
    expect(isUsableDeployment(dep({ status: 'Deployed' }))).toBe(false);
    expect(isUsableDeployment(dep({ status: 'Deployed', address: 'KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi' }))).toBe(false);
    for (const status of ['DeploymentStarted', 'DeploymentFailed', 'Deprecated', 'deployed', undefined]) {
      expect(isUsableDeployment(dep({ status, address: ADDR }))).toBe(false);
    }
    expect(isUsableDeployment(null)).toBe(false);
  });
});

describe('the transition tables', () => {
  it('cover every status, and final statuses lead nowhere', () => {
    expect(Object.keys(DEPLOYMENT_TRANSITIONS)).toEqual([...DeploymentStatuses]);
    expect(Object.keys(TRANSACTION_TRANSITIONS)).toEqual([...TransactionStatuses]);
    expect(DEPLOYMENT_TRANSITIONS.DeploymentFailed).toEqual([]);
    expect(DEPLOYMENT_TRANSITIONS.Deprecated).toEqual([]);
  });

  it('accept exactly the documented moves (every pair checked)', () => {
    const allowed = new Set(['DeploymentStarted>Deployed', 'DeploymentStarted>DeploymentFailed', 'Deployed>Deprecated']);
    for (const from of DeploymentStatuses) {
      for (const to of DeploymentStatuses) {
        const problems = check([dep({ status: from, address: ADDR })], [dep({ status: to, address: ADDR })]);
        const ok = from === to || allowed.has(`${from}>${to}`);
        expect(problems.length === 0, `${from} -> ${to}`).toBe(ok);
      }
    }
    const txAllowed = new Set(['TxPosted>TxConfirmed', 'TxPosted>TxFailed']);
    for (const from of TransactionStatuses) {
      for (const to of TransactionStatuses) {
        const problems = check([dep({ transactions: [tx({ status: from, txHash: H1 })] })], [dep({ transactions: [tx({ status: to, txHash: H1 })] })]);
        expect(problems.length === 0, `${from} -> ${to}`).toBe(from === to || txAllowed.has(`${from}>${to}`));
      }
    }
  });
});

describe('checkDeploymentTransitions', () => {
  it('accepts the contract example and the whole forward path', () => {
    const started = dep({ status: 'DeploymentStarted', transactions: [tx({ status: 'TxPosted', smartContractDeploymentId: 'd1' })] });
    expect(check([], [started])).toEqual([]);
    const deployed = dep({ status: 'Deployed', address: ADDR, transactions: [tx({ status: 'TxConfirmed', txHash: H3, blockNumber: 7, smartContractDeploymentId: 'd1' })] });
    expect(check([started], [deployed])).toEqual([]);
    expect(check([deployed], [{ ...deployed, status: 'Deprecated' }])).toEqual([]);
    expect(check([deployed], [deployed, dep({ id: 'd2', status: 'DeploymentStarted' })])).toEqual([]);
    expect(check([deployed], [])).toEqual([]); // removal is a PATCH's right (arrays are replaced whole)
  });

  it('refuses moving backwards, with a pointer to the status', () => {
    expect(check(
      [dep({ id: 'a', status: 'DeploymentStarted' }), dep({ id: 'b', status: 'Deployed', address: ADDR })],
      [dep({ id: 'a', status: 'DeploymentStarted' }), dep({ id: 'b', status: 'DeploymentStarted', address: ADDR })],
    )).toEqual([{ pointer: '/smartContractDeployments/1/status', message: 'deployment "b" cannot move back from Deployed to DeploymentStarted' }]);
    expect(check([dep({ status: 'Deprecated', address: ADDR })], [dep({ status: 'Deployed', address: ADDR })]))
      .toEqual([{ pointer: '/smartContractDeployments/0/status', message: 'deployment "d1" cannot move back from Deprecated to Deployed' }]);
  });

  it('refuses leaving a final status and skipping ahead', () => {
    expect(first(check([dep({ status: 'DeploymentFailed' })], [dep({ status: 'Deployed', address: ADDR })])).message)
      .toBe('deployment "d1" is DeploymentFailed, a final status: it cannot become Deployed (record a new deployment instead)');
    expect(first(check([dep({ status: 'DeploymentStarted' })], [dep({ status: 'Deprecated' })])).message)
      .toBe('deployment "d1" cannot move from DeploymentStarted to Deprecated (from DeploymentStarted it may become Deployed or DeploymentFailed)');
  });

  it('refuses unknown statuses with the allowed list, but leaves unchanged stored values alone', () => {
    expect(check([], [dep({ status: 'Live' })])).toEqual([{
      pointer: '/smartContractDeployments/0/status',
      message: 'status must be one of DeploymentStarted, Deployed, DeploymentFailed, Deprecated (got "Live")',
    }]);
    expect(check([dep({ status: 'Live' })], [dep({ status: 'Live', version: '2' })])).toEqual([]);
    expect(check([dep({ status: 'Live' })], [dep({ status: 'Deployed', address: ADDR })])).toEqual([]);
    expect(check([], [dep({ transactions: [tx({ status: 'Mined' })] })])).toEqual([{
      pointer: '/smartContractDeployments/0/transactions/0/status',
      message: 'status must be one of TxPosted, TxConfirmed, TxFailed (got "Mined")',
    }]);
  });

  it('refuses removing a status', () => {
    expect(check([dep({ status: 'DeploymentStarted' })], [dep({})])).toEqual([
      { pointer: '/smartContractDeployments/0/status', message: 'deployment "d1" had status DeploymentStarted: a status cannot be removed' },
    ]);
  });

  it('a Deployed deployment needs a valid EVM address that never changes', () => {
    expect(check([], [dep({ status: 'Deployed' })])).toEqual([
      { pointer: '/smartContractDeployments/0/address', message: 'deployment "d1" is Deployed, so it needs the contract address' },
    ]);
    expect(check([], [dep({ status: 'Deployed', address: '0x52908400098527886E0F7030069857D2E4169Ee7' })])[0])
      .toMatchObject({ pointer: '/smartContractDeployments/0/address', message: expect.stringContaining('EIP-55') });
    expect(check([dep({ status: 'Deployed', address: ADDR })], [dep({ status: 'Deployed', address: OTHER })])).toEqual([{
      pointer: '/smartContractDeployments/0/address',
      message: `deployment "d1" was Deployed at ${ADDR}: its address cannot change (record a new deployment instead)`,
    }]);
    expect(check([dep({ status: 'Deployed', address: ADDR })], [dep({ status: 'Deprecated', address: null })])).toHaveLength(1);
    expect(check([dep({ status: 'DeploymentStarted', address: ADDR })], [dep({ status: 'Deployed', address: OTHER })])).toEqual([]);
  });

  it('refuses a new or changed txHash that is not 0x and 64 hex digits, and leaves a stored one as it is', () => {
    for (const bad of ['0x1234', `0x${'g'.repeat(64)}`, `${'1'.repeat(64)}`, `0x${'1'.repeat(65)}`]) {
      expect(check([], [dep({ transactions: [tx({ status: 'TxPosted', txHash: bad })] })])).toEqual([{
        pointer: '/smartContractDeployments/0/transactions/0/txHash', message: 'transaction "t1": txHash must be a 0x-prefixed 32-byte hex hash (64 hex digits)',
      }]);
    }
    const stored = dep({ transactions: [tx({ status: 'TxPosted', txHash: '0x1234' })] });
    expect(check([stored], [stored])).toEqual([]);
    expect(check([stored], [dep({ status: 'DeploymentFailed', transactions: [tx({ status: 'TxFailed', txHash: '0x1234' })] })])).toEqual([]);
    expect(check([], [dep({ transactions: [tx({ status: 'TxPosted', txHash: `0x${'aB'.repeat(32)}` })] })])).toEqual([]);
  });

  it('checks transactions: no going back, txHash when confirmed and fixed once known, the right deployment id', () => {
    const posted = dep({ transactions: [tx({ status: 'TxPosted', txHash: H1 })] });
    expect(check([dep({ transactions: [tx({ status: 'TxConfirmed', txHash: H1 })] })], [posted])).toEqual([{
      pointer: '/smartContractDeployments/0/transactions/0/status', message: 'transaction "t1" cannot move back from TxConfirmed to TxPosted',
    }]);
    expect(check([], [dep({ transactions: [tx({ status: 'TxConfirmed' })] })])).toEqual([{
      pointer: '/smartContractDeployments/0/transactions/0/txHash', message: 'transaction "t1" is TxConfirmed, so it needs a txHash',
    }]);
    expect(check([posted], [dep({ transactions: [tx({ status: 'TxConfirmed', txHash: H2 })] })])).toEqual([{
      pointer: '/smartContractDeployments/0/transactions/0/txHash',
      message: 'transaction "t1" already has a txHash: it cannot change (record a new transaction instead)',
    }]);
    expect(check([], [dep({ transactions: [tx({ status: 'TxPosted', smartContractDeploymentId: 'd9' })] })])).toEqual([{
      pointer: '/smartContractDeployments/0/transactions/0/smartContractDeploymentId',
      message: 'transaction "t1" is listed under deployment "d1" but names deployment "d9"',
    }]);
  });

  it('refuses duplicate ids', () => {
    expect(check([], [dep({ status: 'DeploymentStarted' }), dep({ status: 'DeploymentStarted' })])).toEqual([
      { pointer: '/smartContractDeployments/1/id', message: 'duplicate deployment id "d1"' },
    ]);
    expect(check([], [dep({ transactions: [tx({ status: 'TxPosted' }), tx({ status: 'TxPosted' })] })])).toEqual([
      { pointer: '/smartContractDeployments/0/transactions/1/id', message: 'duplicate transaction id "t1"' },
    ]);
  });

  it('is total on odd input', () => {
    expect(checkDeploymentTransitions(undefined, undefined)).toEqual([]);
    expect(checkDeploymentTransitions(null, [])).toEqual([]);
    expect(checkDeploymentTransitions([null as never], [null as never, dep({ status: 'Deployed', address: ADDR })])).toEqual([]);
  });
});

describe('deploymentBlock', () => {
  it('is the lowest block of the transactions that did not fail', () => {
    expect(deploymentBlock(dep({ transactions: [tx({ status: 'TxFailed', blockNumber: 1 }), tx({ id: 't2', status: 'TxConfirmed', blockNumber: 8 }), tx({ id: 't3', blockNumber: 4 })] }))).toBe(4);
    expect(deploymentBlock(dep())).toBeUndefined();
  });
});

describe('the service-written multiRequest', () => {
  const multi = { multiRequestId: '7', requestIds: ['1', '2'], groupIds: ['3'], transactions: ['tx-2'] };
  const stored = [dep({ multiRequest: multi })];

  it('is not changed by the same content in another key order (PostgreSQL JSONB hands keys back in its own)', () => {
    const reordered = { transactions: ['tx-2'], groupIds: ['3'], requestIds: ['1', '2'], multiRequestId: '7' };
    expect(checkServiceFields(stored, [dep({ multiRequest: reordered })])).toEqual([]);
    expect(first(checkServiceFields(stored, [dep({ multiRequest: { ...multi, groupIds: ['4'] } })])).pointer).toBe('/smartContractDeployments/0/multiRequest');
    expect(first(checkServiceFields([], [dep({ multiRequest: multi })])).message).toMatch(/cannot set it/);
  });

  it('is kept when a PATCH rewrites the deployments in the seed\'s shape (without it), and only then', () => {
    const merged = { name: 'x', smartContractDeployments: [dep({ status: 'Deployed' }), dep({ id: 'd2' })] };
    const kept = keepServiceFields(stored, merged) as { smartContractDeployments: SmartContractDeployment[] };
    expect(kept.smartContractDeployments[0]).toEqual(dep({ status: 'Deployed', multiRequest: multi }));
    expect(kept.smartContractDeployments[1]).toEqual(dep({ id: 'd2' }));
    expect(checkServiceFields(stored, kept.smartContractDeployments)).toEqual([]);
    // A changed one stays changed (and is refused); garbage is left for the schema to name.
    const changed = keepServiceFields(stored, { smartContractDeployments: [dep({ multiRequest: { ...multi, multiRequestId: '8' } })] }) as typeof kept;
    expect(checkServiceFields(stored, changed.smartContractDeployments)).toHaveLength(1);
    expect(keepServiceFields(stored, { smartContractDeployments: 'x' })).toEqual({ smartContractDeployments: 'x' });
    expect(keepServiceFields(stored, null)).toBeNull();
  });
});
