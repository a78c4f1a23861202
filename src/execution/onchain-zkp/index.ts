/** Each rule's verdict is the verifier contract's view of the address. */
import type { ProofStatusReader } from '../../chain/index.js';
import type { JsonLdLoader } from '../../jsonld/documents.js';
import type { ScenarioModule } from '../types.js';
import { IDEN3_MAX_IN_VALUES, ZKP_REQUEST_ID_REQUIRED } from '../zkp-policy.js';

export interface OnChainZkpDeps {
  /** None configured: reads nothing. */
  chain: ProofStatusReader;
  /** CHAIN_ALLOW_UNCHECKED_REQUESTS. */
  allowUncheckedRequests?: boolean;
  /** ZKP_CONTEXTS: credential type -> JSON-LD context, for rules that name none. */
  zkp: { contexts?: Readonly<Record<string, string>> };
  /** Offline, for the rules' contexts. */
  documentLoader?: JsonLdLoader;
}

/** A rule on a V3 request says so with its circuitId. */
const noV2 = (instead: string) => ({
  why: 'the iden3 V2 circuits lack it',
  instead: `use ${instead} with an adjusted value, or circuitId credentialAtomicQueryV3 for a V3 request`,
  unlessCircuit: ['credentialAtomicQueryV3', 'linkedMultiQuery'],
});

export const onChainZkp = {
  type: 'OnChainZKP',
  policy: {
    requestId: { required: ZKP_REQUEST_ID_REQUIRED, unique: 'each zero-knowledge proof request needs its own' },
    refusedOperators: { $lte: noV2('$lt'), $gte: noV2('$gt') },
    // The contract keeps the disclosed value; the rule answers whether it was proved.
    allowsSd: { circuits: ['credentialAtomicQueryV3'], note: 'with circuitId credentialAtomicQueryV3, to name a V3 request that discloses on chain' },
    maxInValues: IDEN3_MAX_IN_VALUES,
  },
  resultFields: { adds: [], firstOnly: [] },
  // The verifier contract keeps each proof under the address that submitted it, which is the address read.
  holderBinding: 'always',
  async create({ chain, allowUncheckedRequests, zkp, documentLoader }: OnChainZkpDeps) {
    const { onChainZkpStrategy } = await import('./strategy.js');
    return onChainZkpStrategy(chain, { allowUncheckedRequests, contexts: zkp.contexts, documentLoader });
  },
} as const satisfies ScenarioModule<'OnChainZKP', OnChainZkpDeps>;
