import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderOpenApi } from '../src/openapi.js';

describe('openapi.yaml', () => {
  it('is what the route schemas generate (run `npm run openapi` after changing a route)', async () => {
    expect(fs.readFileSync('openapi.yaml', 'utf8')).toBe(await renderOpenApi());
  });

  it('documents both contract operations (execute, update) with their statuses, bearer auth and named schemas', async () => {
    const doc = parse(fs.readFileSync('openapi.yaml', 'utf8'));
    expect(doc.openapi).toBe('3.1.0');
    const execute = doc.paths['/compliance/scenarios/execute'].post;
    expect(Object.keys(execute.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '413', '415', '422', '429', '503']);
    expect(execute.security).toEqual([{ bearerAuth: ['scenarios:execute'] }]);
    const patch = doc.paths['/compliance/scenarios/{scenarioId}'].patch;
    expect(Object.keys(patch.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '412', '413', '415', '503']);
    expect(Object.keys(patch.requestBody.content)).toEqual(expect.arrayContaining(['application/json', 'application/merge-patch+json']));
    for (const name of ['Scenario', 'ScenarioPatch', 'Credential', 'ExecutionResult', 'RuleResult', 'Problem', 'Query']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(doc.components.securitySchemes.bearerAuth.scheme).toBe('bearer');
  });
});
