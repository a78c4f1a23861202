import { describe, expect, it } from 'vitest';
import { queryPolicies, resultFields, routesOf, timersOf, type Strategies } from '../../src/execution/registry.js';
import { RuleResult } from '../../src/schemas/execution.js';
import { ScenarioTypes } from '../../src/schemas/scenario.js';
import { challengeQuery } from '../../src/execution/challenge-query/index.js';
import { offChainZkp } from '../../src/execution/offchain-zkp/index.js';
import { onChainZkp } from '../../src/execution/onchain-zkp/index.js';

describe('the registry of scenario types', () => {
  it('registers each of the schema\'s ScenarioTypes with the policy its own module declares', () => {
    const declared = { ChallengeQuery: challengeQuery, OnChainZKP: onChainZkp, OffChainZKP: offChainZkp };
    for (const type of ScenarioTypes) {
      expect(declared[type].type).toBe(type);
      expect(queryPolicies[type]).toBe(declared[type].policy);
    }
  });

  it('declares only result fields of the RuleResult schema beyond verdict, status and query', () => {
    const required: readonly string[] = RuleResult.required ?? [];
    const optional = Object.keys(RuleResult.properties).filter((f) => !required.includes(f));
    expect(optional).toEqual(expect.arrayContaining([...resultFields.adds]));
    expect(resultFields.adds).toEqual(expect.arrayContaining([...resultFields.firstOnly]));
    expect(resultFields.firstOnly).toEqual(['authorizationRequest']);
  });

  it('binds each type\'s declared timers to its strategy: OffChainZKP\'s expiry sweep, every 5 s', async () => {
    let swept = 0;
    // Only the binding is under test: a strategy object with the one method the timer calls.
    const strategies = { ChallengeQuery: {}, OnChainZKP: {}, OffChainZKP: { sweep: async () => { swept++; } } } as unknown as Strategies;
    const timers = timersOf(strategies);
    expect(timers.map((t) => [t.type, t.name, t.everyMs])).toEqual([['OffChainZKP', 'expiring pending executions', 5000]]);
    await timers[0]!.run();
    expect(swept).toBe(1);
  });

  it('binds each type\'s declared routes to its strategy: OffChainZKP\'s open callback, limited per client as the strategy says', async () => {
    const answered: Array<[string, string]> = [];
    // Only the binding is under test: a strategy object with what the callback reads and calls.
    const offChain = {
      responsesPerMinute: 7,
      answer: async (executionId: string, token: string) => {
        answered.push([executionId, token]);
        return executionId === 'known' ? { ok: true, execution: { executionId } } : undefined;
      },
    };
    const strategies = { ChallengeQuery: {}, OnChainZKP: {}, OffChainZKP: offChain } as unknown as Strategies;
    const routes = routesOf(strategies);
    expect(routes.map((r) => [r.type, r.method, r.path, r.operationId])).toEqual([
      ['OffChainZKP', 'POST', '/compliance/executions/:executionId/zkp-response', 'answerZkpRequest'],
    ]);
    const [callback] = routes;
    expect(callback!.perClient).toEqual({ perMinute: 7, what: 'answers' });
    expect(callback!.textTypes).toEqual(['text/plain', 'application/octet-stream']);
    // A token is trimmed; a plain message (JSON) is handed on as its text.
    await expect(callback!.handle({ params: { executionId: 'known' }, body: ' jwz-token\n' })).resolves.toEqual({ executionId: 'known' });
    await expect(callback!.handle({ params: { executionId: 'gone' }, body: { typ: 'x' } })).rejects.toMatchObject({ code: 'SCS_EXECUTION_NOT_FOUND', statusCode: 404 });
    expect(answered).toEqual([['known', 'jwz-token'], ['gone', '{"typ":"x"}']]);
  });
});
