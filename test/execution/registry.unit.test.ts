import { describe, expect, it } from 'vitest';
import { queryPolicies, resultFields } from '../../src/execution/registry.js';
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
});
