/** Executor.dryRun: execute's results with a trace for every rule, whatever the scenario type decides them with. */
import { describe, expect, it } from 'vitest';
import { Executor, type ExecuteInput, type ScenarioStrategy } from '../../src/execution/index.js';
import { challengeQueryStrategy } from '../../src/execution/challenge-query/strategy.js';
import { resultTrace } from '../../src/execution/dry-run.js';
import { compilePlan, type TypeDeclarations } from '../../src/engine/index.js';
import { executionResult, failed } from '../../src/engine/result.js';
import { createCredentialVerifier } from '../../src/trust/index.js';
import type { Scenario, ScenarioType } from '../../src/schemas/scenario.js';
import { ADDRESS, EXECUTION_ID, NOW, TYPES, credential } from '../engine/factories.js';
import { expectTraceOf } from '../engine/dry-run.js';
import { trustOptions } from '../trust/options.js';

function input(type: ScenarioType, credentials = [credential('urn:a', { personalData: { age: 30 } })]): ExecuteInput {
  const scenario: Scenario = {
    name: 'Dry', type, smartContractDeployments: [],
    queryConfigurations: [
      { id: 'adult', query: { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gte', value: 18 } },
      { id: 'senior', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', operator: '$gte', value: 65 } },
    ],
  };
  const types: TypeDeclarations = TYPES;
  return {
    compiled: { plan: compilePlan('dry', 1, scenario, types), seq: 1, revision: 1, projectId: null, scenario, digest: 'unused' },
    address: ADDRESS, credentials, digests: credentials.map((_, i) => `d${i}`), executionId: EXECUTION_ID, at: NOW, tenant: 't',
  };
}

describe('Executor.dryRun', () => {
  it('ChallengeQuery: the results execute gives, and each rule traced by the engine', async () => {
    const strategy = challengeQueryStrategy(createCredentialVerifier(trustOptions({ mode: 'off' })));
    const executor = new Executor([strategy]);
    const call = input('ChallengeQuery');
    const executed = await executor.execute(call);
    const dry = await executor.dryRun(call);
    expect(dry.results).toEqual(executed.results);
    expect(dry.trace.map((t) => [t.ruleId, t.status, t.decidingCredential?.index, t.decidingCheck?.check])).toEqual([
      ['adult', 'valid', 0, undefined],
      ['senior', 'not-valid', undefined, 'value'],
    ]);
    expect(dry.trace[0]?.credentials[0]?.checks.map((c) => `${c.check}:${c.outcome}`)).toContain('verification:skipped');
    expectTraceOf(dry.trace, dry.results, { address: ADDRESS, credentials: call.credentials, now: NOW, executionId: EXECUTION_ID });
  });

  it('a type decided outside the engine: its results, each traced from what it carries', async () => {
    const call = input('OnChainZKP');
    const head = { objectType: 'OnChainZKP' as const, name: 'Dry', scenarioId: 'dry', address: ADDRESS, executionId: EXECUTION_ID };
    const [adult, senior] = call.compiled.plan.rules;
    if (adult === undefined || senior === undefined) throw new Error('two rules');
    const onChain: ScenarioStrategy = {
      type: 'OnChainZKP',
      execute: async () => ({
        results: [
          executionResult(head, adult, 'valid', { is_valid: true, reasons: [], scenarioVerifierAddress: '0xabc', chain: 'eip155:80002', blockNumber: 7 }),
          executionResult(head, senior, 'not-valid', { is_valid: false, reasons: ['no proof'], scenarioVerifierAddress: '0xabc', chain: 'eip155:80002', blockNumber: 7 }),
        ],
      }),
    };
    const dry = await new Executor([onChain]).dryRun(call);
    expect(dry.trace).toEqual([
      { ruleId: 'adult', status: 'valid', credentials: [], note: 'the proof status of the address: the verifier contract 0xabc was read on eip155:80002 at block 7' },
      { ruleId: 'senior', status: 'not-valid', credentials: [], decidingCheck: { check: 'chain' }, note: expect.stringContaining('0xabc') },
    ]);
  });

  it('OffChainZKP: pending with the request issued, or error where none could be built', () => {
    const head = { objectType: 'OffChainZKP' as const, name: 'Dry', scenarioId: 'dry', address: ADDRESS, executionId: EXECUTION_ID };
    const rule = { id: 'adult', query: { type: 'IDInformation', operator: '$noop' as const } };
    const pending = resultTrace(executionResult(head, rule, 'pending', failed(['awaiting']), { authorizationRequest: { id: 'x' } }));
    expect(pending).toEqual({ ruleId: 'adult', status: 'pending', credentials: [], note: expect.stringMatching(/^pending: authorization request issued/) });
    const unset = resultTrace(executionResult(head, rule, 'error', failed(['ZKP_VERIFIER_DID is unset'])));
    expect(unset.decidingCheck).toEqual({ check: 'rule' });
  });
});
