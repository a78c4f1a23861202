import { describe, expect, it } from 'vitest';
import { queryPolicies, resultFields, timersOf, type Strategies } from '../../src/execution/registry.js';
import { RuleResult } from '../../src/schemas/execution.js';
import { ScenarioTypes } from '../../src/schemas/scenario.js';

describe('the registry of scenario types', () => {
  it('holds exactly the schema\'s ScenarioTypes, in its order', () => {
    expect(Object.keys(queryPolicies)).toEqual([...ScenarioTypes]);
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
});
