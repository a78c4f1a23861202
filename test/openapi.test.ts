import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderOpenApi } from '../src/openapi.js';

const doc = parse(fs.readFileSync('openapi.yaml', 'utf8'));
type Operation = { operationId: string; responses: Record<string, { description: string }> };
const operations = Object.values(doc.paths as Record<string, Record<string, Operation>>).flatMap((item) => Object.values(item));
const operation = (id: string) => operations.find((o) => o.operationId === id)!;

/** Every node of the document with its JSON pointer. */
function * nodes(node: unknown, at = ''): Generator<[string, Record<string, unknown>]> {
  if (node === null || typeof node !== 'object') return;
  if (!Array.isArray(node)) yield [at, node as Record<string, unknown>];
  for (const [k, v] of Object.entries(node)) yield * nodes(v, `${at}/${k}`);
}

describe('openapi.yaml', () => {
  it('is what the route schemas generate (run `npm run openapi` after changing a route)', async () => {
    expect(fs.readFileSync('openapi.yaml', 'utf8')).toBe(await renderOpenApi());
  });

  it('documents execute and update with their statuses, bearer auth and named schemas', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const execute = doc.paths['/compliance/scenarios/execute'].post;
    expect(Object.keys(execute.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '413', '415', '422', '429', '503']);
    expect(execute.security).toEqual([{ bearerAuth: ['scenarios:execute'] }]);
    const patch = doc.paths['/compliance/scenarios/{scenarioId}'].patch;
    expect(Object.keys(patch.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '412', '413', '415', '429', '503']);
    expect(Object.keys(patch.requestBody.content)).toEqual(expect.arrayContaining(['application/json', 'application/merge-patch+json']));
    for (const name of ['Scenario', 'ScenarioPatch', 'Credential', 'ExecutionResult', 'RuleResult', 'Problem', 'Query']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(doc.components.securitySchemes.bearerAuth.scheme).toBe('bearer');
  });

  it('names every response by when it happens: no "Default Response", no bare status title', () => {
    const bare = /^(Default Response|Error|Bad Request|Unauthorized|Forbidden|Not Found|Conflict|Precondition Failed|Content Too Large|Unsupported Media Type|Unprocessable Content|Too Many Requests|Service Unavailable)$/;
    let count = 0;
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${op.operationId} ${status}`).not.toMatch(bare);
        expect(response.description.length, `${op.operationId} ${status}`).toBeGreaterThan(30);
        count++;
      }
    }
    expect(count).toBeGreaterThan(60);
    // A route's own case is described where the common text would mislead: the 404 of a scenario is not an execution's.
    expect(operation('getScenario').responses['404'].description).toMatch(/SCS_SCENARIO_NOT_FOUND/);
    expect(operation('getExecution').responses['404'].description).toMatch(/SCS_EXECUTION_NOT_FOUND/);
    expect(operation('updateScenario').responses['412'].description).toMatch(/Read it again/);
  });

  it('speaks of the contract without "seed" jargon', () => {
    expect(fs.readFileSync('openapi.yaml', 'utf8')).not.toMatch(/\bseed\b/i);
  });

  it('lists the values of every enum-like field as one enum, never as anyOf of constants', () => {
    const { schemas } = doc.components;
    expect(schemas.ScenarioType.enum).toEqual(['ChallengeQuery', 'OnChainZKP', 'OffChainZKP']);
    expect(schemas.RuleStatus.enum).toEqual(['valid', 'not-valid', 'error', 'pending']);
    expect(schemas.Query.properties.operator.enum).toEqual([
      '$noop', '$eq', '$ne', '$lt', '$lte', '$gt', '$gte', '$in', '$nin', '$exists', '$between', '$nonbetween',
    ]);
    expect(schemas.Query.properties.circuitId.enum).toEqual(['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2']);
    expect(schemas.Execution.properties.state.enum).toEqual(['completed', 'pending', 'failed']);
    const constant = (b: Record<string, unknown>) => 'const' in b || (Array.isArray(b.enum) && b.enum.length === 1);
    for (const [at, node] of nodes(doc)) {
      const branches = node.anyOf as Record<string, unknown>[] | undefined;
      if (branches) expect(branches.every(constant), at).toBe(false);
    }
  });
});
