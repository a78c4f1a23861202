/**
 * OffChainZKP: the holder's wallet proves each rule with a zero-knowledge proof; the results stay pending until it
 * answers (its callback route, callback.ts) or its request expires (its sweep, below).
 */
import type { ScenarioModule } from '../types.js';
import { IDEN3_MAX_IN_VALUES, ZKP_REQUEST_ID_REQUIRED } from '../zkp-policy.js';
import { callbackRoute } from './callback.js';
import type { OffChainZkp, OffChainZkpOptions } from './strategy.js';

export const offChainZkp = {
  type: 'OffChainZKP',
  // Linked rules of one group share a requestId, and what each circuit proves is checked per circuit by the
  // strategy's validate (zkp/queries.ts, zkp/query-groups.ts).
  policy: { allowsSd: true, requestId: { required: ZKP_REQUEST_ID_REQUIRED }, maxInValues: IDEN3_MAX_IN_VALUES },
  // The request is the same on every result; `disclosure` comes with the wallet's answer.
  resultFields: { adds: ['authorizationRequest', 'disclosure'], firstOnly: ['authorizationRequest'] },
  // An identity made from an Ethereum address must be made from the execution's; one made from a key (most wallets')
  // may answer for any address.
  holderBinding: 'never',
  /** Where OffChainZKP is configured, loads its library and verification keys now: a bad setting stops the start. */
  async create(deps: OffChainZkpOptions): Promise<OffChainZkp> {
    const { OffChainZkp } = await import('./strategy.js');
    const strategy = new OffChainZkp(deps);
    await strategy.ready();
    return strategy;
  },
  timers: [{ name: 'expiring pending executions', everyMs: 5000, run: (strategy: OffChainZkp) => strategy.sweep() }],
  routes: [callbackRoute],
} as const satisfies ScenarioModule<'OffChainZKP', OffChainZkpOptions, OffChainZkp>;
