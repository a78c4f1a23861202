/** planSends (src/chain/deploy-plan.ts): what a deploy sends given what the verifier holds; no chain. */
import { describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { HeldConflict, planSends, type Held } from '../../src/chain/deploy-plan.js';
import type { BuiltRequests } from '../../src/chain/deploy-requests.js';
import type { QueryConfiguration } from '../../src/schemas/scenario.js';

const creator = '0x00000000000000000000000000000000000000c1' as Address;
const validator = '0x00000000000000000000000000000000000000a1' as Address;
const other = '0x00000000000000000000000000000000000000a2' as Address;
const verifier = '0x00000000000000000000000000000000000000f1' as Address;
const request = (requestId: bigint, params: Hex) => ({ requestId, metadata: '', validator, params, creator });

/** Rules a (single), b and c (group 7); requests 1, 2 and 3. */
const rules = ['a', 'b', 'c'].map((id) => ({ id, query: {} })) as unknown as QueryConfiguration[];
const built: BuiltRequests = {
  requests: [request(1n, '0x01'), request(2n, '0x02'), request(3n, '0x03')],
  rules: [{ queryConfigurationId: 'a', requestId: '1' }, { queryConfigurationId: 'b', requestId: '2' }, { queryConfigurationId: 'c', requestId: '3' }],
  members: [{ requestId: 1n, groupId: 0n }, { requestId: 2n, groupId: 7n }, { requestId: 3n, groupId: 7n }],
  multiRequest: { multiRequestId: 99n, requestIds: [1n], groupIds: [7n], metadata: '0x' },
};
const held = (over: Partial<Held> = {}): Held => ({ requests: new Map(), groups: new Map(), multi: false, ...over });
const same = (id: bigint, params: Hex) => [id, { validator, params, creator }] as const;

describe('planSends', () => {
  it('sends everything to a verifier that holds none of it, and the multi-request', () => {
    expect(planSends(rules, built, held(), verifier)).toEqual({ requests: built.requests, reused: [], multi: 'send' });
  });

  it('reuses what the verifier holds as the rules make it; all held, the multi-request too: nothing to send', () => {
    const all = held({ requests: new Map([same(1n, '0x01'), same(2n, '0x02'), same(3n, '0x03')]), groups: new Map([[7n, [2n, 3n]]]), multi: true });
    expect(planSends(rules, built, all, verifier)).toEqual({ requests: [], reused: [1n, 2n, 3n], multi: 'held' });
    const single = held({ requests: new Map([same(1n, '0x01')]) });
    expect(planSends(rules, built, single, verifier)).toEqual({ requests: built.requests.slice(1), reused: [1n], multi: 'send' });
  });

  it('refuses a request id held with another validator, naming the rule\'s requestId', () => {
    const otherValidator = held({ requests: new Map([[1n, { validator: other, params: '0x01' as Hex, creator }]]) });
    const conflict = (() => { try { planSends(rules, built, otherValidator, verifier); } catch (err) { return err; } })();
    expect(conflict).toBeInstanceOf(HeldConflict);
    expect((conflict as HeldConflict).problems).toEqual([expect.objectContaining({ pointer: '/queryConfigurations/0/query/requestId', message: expect.stringMatching(/choose a new id/) })]);
  });

  it('refuses a group held with other requests, naming each of its rules\' groupId', () => {
    const partly = held({ requests: new Map([same(3n, '0x03')]), groups: new Map([[7n, [5n, 3n]]]) });
    expect(() => planSends(rules, built, partly, verifier)).toThrow(HeldConflict);
    try {
      planSends(rules, built, partly, verifier);
    } catch (err) {
      expect((err as HeldConflict).problems.map((p) => p.pointer)).toEqual(['/queryConfigurations/1/query/groupId', '/queryConfigurations/2/query/groupId']);
    }
  });
});
