/** Results stay pending until the wallet answers (callback.ts) or its request expires (the sweep below). */
import type { ScenarioModule } from '../types.js';
import { IDEN3_MAX_IN_VALUES, ZKP_REQUEST_ID_REQUIRED } from '../zkp-policy.js';
import { callbackRoute } from './callback.js';
import type { OffChainZkp, OffChainZkpOptions } from './strategy.js';

export const offChainZkp = {
  type: 'OffChainZKP',
  // Linked rules share a requestId; what each circuit proves is checked by the strategy's validate (zkp/queries.ts).
  policy: { allowsSd: true, requestId: { required: ZKP_REQUEST_ID_REQUIRED }, maxInValues: IDEN3_MAX_IN_VALUES },
  // The request is the same on every result.
  resultFields: { adds: ['authorizationRequest', 'disclosure'], firstOnly: ['authorizationRequest'] },
  // An identity made from an Ethereum address must be made from the execution's; one made from a key (most wallets')
  // may answer for any address.
  holderBinding: 'never',
  /** Loads its library and verification keys now, so a bad setting stops the start. */
  async create(deps: OffChainZkpOptions): Promise<OffChainZkp> {
    const { OffChainZkp } = await import('./strategy.js');
    const strategy = new OffChainZkp(deps);
    await strategy.ready();
    return strategy;
  },
  timers: [{ name: 'expiring pending executions', everyMs: 5000, run: (strategy: OffChainZkp) => strategy.sweep() }],
  routes: [callbackRoute],
} as const satisfies ScenarioModule<'OffChainZKP', OffChainZkpOptions, OffChainZkp>;
