import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderOpenApi } from '../src/openapi.js';
import { auth, makeApp } from './helpers.js';
import { Api, type OpenApiDoc } from './fuzz/openapi.js';
import { entry, first } from './elements.js';
import { haveIden3Documents } from './shared-fixtures.js';

const doc = parse(fs.readFileSync('openapi.yaml', 'utf8'));
type Operation = {
  operationId: string;
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
  responses: Record<string, { description: string; content?: Record<string, { examples?: Record<string, { value: unknown }> }> }>;
};
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
    expect(Object.keys(patch.responses).sort()).toEqual(['200', '202', '400', '401', '403', '404', '409', '412', '413', '415', '429', '503']);
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
    expect(entry(operation('getScenario').responses, '404').description).toMatch(/SCS_SCENARIO_NOT_FOUND/);
    expect(entry(operation('getExecution').responses, '404').description).toMatch(/SCS_EXECUTION_NOT_FOUND/);
    expect(entry(operation('updateScenario').responses, '412').description).toMatch(/Read it again/);
  });

  it('speaks of the contract without "seed" jargon', () => {
    expect(fs.readFileSync('openapi.yaml', 'utf8')).not.toMatch(/\bseed\b/i);
  });

  it('lists the values of every enum-like field as one enum, never as anyOf of constants', () => {
    const { schemas } = doc.components;
    expect(schemas.ScenarioType.enum).toEqual(['ChallengeQuery', 'OnChainZKP', 'OffChainZKP']);
    expect(schemas.RuleStatus.enum).toEqual(['valid', 'not-valid', 'error', 'pending']);
    expect(schemas.Query.properties.operator.enum).toEqual([
      '$noop', '$eq', '$ne', '$lt', '$lte', '$gt', '$gte', '$in', '$nin', '$exists', '$between', '$nonbetween', '$sd',
    ]);
    expect(schemas.Query.properties.circuitId.enum).toEqual(['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2', 'credentialAtomicQueryV3', 'linkedMultiQuery']);
    expect(schemas.Execution.properties.state.enum).toEqual(['completed', 'pending', 'failed']);
    const constant = (b: Record<string, unknown>) => 'const' in b || (Array.isArray(b.enum) && b.enum.length === 1);
    for (const [at, node] of nodes(doc)) {
      const branches = node.anyOf as Record<string, unknown>[] | undefined;
      if (branches) expect(branches.every(constant), at).toBe(false);
    }
  });

  it('has execute examples that its schemas accept: each request, and the response of the same name', () => {
    const api = new Api(doc as OpenApiDoc);
    const execute = api.op('POST', '/compliance/scenarios/execute');
    const requests = entry(operation('executeScenario').requestBody!.content, 'application/json').examples!;
    const responses = entry(entry(operation('executeScenario').responses, '200').content!, 'application/json').examples!;
    expect(Object.keys(requests).length).toBeGreaterThan(0);
    expect(Object.keys(responses)).toEqual(Object.keys(requests));
    const request = api.bodyValidator(execute, 'application/json');
    const response = api.responseValidator(execute, '200', 'application/json');
    for (const [name, example] of Object.entries(requests)) {
      expect(request(example.value), `${name}: ${JSON.stringify(request.errors)}`).toBe(true);
      expect(response(entry(responses, name).value), `${name}: ${JSON.stringify(response.errors)}`).toBe(true);
    }
    // A change to a credential breaks its proof: the example is not a made-up document.
    const { value } = first(Object.values(requests)) as { value: { credentials: { proof: unknown }[] } };
    expect(JSON.stringify(first(value.credentials).proof)).toMatch(/BJJSignature2021/);
  });

  it.skipIf(!haveIden3Documents())('shows what the service answers: each execute example request gets its example response', async () => {
    // The demo issuer signed the example credential; DEMO_ISSUER=1 trusts it and answers its revocation status.
    const app = await makeApp({ CREDENTIAL_VERIFICATION: 'strict', DEMO_ISSUER: '1' }, { now: () => Date.parse('2026-11-22T10:00:00Z') });
    try {
      const create = entry(operation('createScenario').requestBody!.content, 'application/json') as unknown as
        { example?: object; examples?: Record<string, { value: object }> };
      // Every create example is accepted (the OffChainZKP one against iden3's contexts, handed in by makeApp).
      const creates = create.examples ? Object.values(create.examples).map((e) => e.value) : [create.example!];
      expect(creates.length).toBeGreaterThanOrEqual(2);
      for (const body of creates) {
        const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: body });
        expect(created.statusCode, created.body).toBe(201);
      }
      const requests = entry(operation('executeScenario').requestBody!.content, 'application/json').examples!;
      const responses = entry(entry(operation('executeScenario').responses, '200').content!, 'application/json').examples!;
      for (const [name, { value }] of Object.entries(requests)) {
        const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: value as object });
        expect(res.statusCode, name).toBe(200);
        // The executionId is new on every call: the example's is the one of the run it was taken from.
        const expected = entry(responses, name).value as { executionId: string }[];
        const id = res.json()[0].executionId;
        const withId = (results: unknown) => JSON.parse(JSON.stringify(results).replaceAll(first(expected).executionId, id));
        expect(res.json(), name).toEqual(withId(expected));
      }
    } finally {
      await app.close();
    }
  }, 60_000);
});
