/**
 * What openapi.yaml tells a client beyond the bodies: the response headers where they are sent, If-Match's quoted
 * form, PATCH examples the service accepts (arrays replaced whole), and problem examples as the service writes them.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { auth, makeApp } from './helpers.js';

type Example = { value: Record<string, unknown> };
type Response = { headers?: Record<string, unknown>; content?: Record<string, { examples?: Record<string, Example> }> };
type Operation = {
  operationId: string;
  parameters?: { in: string; name: string; description?: string; example?: unknown }[];
  requestBody?: { content: Record<string, { examples?: Record<string, Example>; example?: unknown }> };
  responses: Record<string, Response>;
};

const doc = parse(fs.readFileSync('openapi.yaml', 'utf8'));
const operations = Object.values(doc.paths as Record<string, Record<string, Operation>>).flatMap((item) => Object.values(item));
const operation = (id: string) => operations.find((o) => o.operationId === id)!;
const headersOf = (id: string, status: string) => Object.keys(operation(id).responses[status]?.headers ?? {});

const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 412: 'Precondition Failed',
  413: 'Content Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Content', 429: 'Too Many Requests', 503: 'Service Unavailable',
};
/** The operations of the contract and the scenario routes: every problem status of theirs has an example. */
const EXAMPLED = ['executeScenario', 'createScenario', 'listScenarios', 'getScenario', 'deleteScenario', 'updateScenario', 'getExecution', 'listScenarioExecutions'];

describe('openapi.yaml response headers', () => {
  it('declares x-request-id on every response, and Retry-After on every 429 and 503', () => {
    expect(doc.components.headers.RequestId.schema).toEqual({ type: 'string' });
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.headers?.['x-request-id'], `${op.operationId} ${status}`).toEqual({ $ref: '#/components/headers/RequestId' });
        if (status === '429' || status === '503') expect(Object.keys(response.headers ?? {}), `${op.operationId} ${status}`).toContain('Retry-After');
      }
    }
  });

  it('declares ETag, Location and Idempotent-Replayed where they are sent', () => {
    expect(headersOf('createScenario', '201')).toEqual(expect.arrayContaining(['ETag', 'Location', 'Idempotent-Replayed']));
    expect(headersOf('getScenario', '200')).toContain('ETag');
    expect(headersOf('updateScenario', '200')).toContain('ETag');
    expect(headersOf('executeScenario', '200')).toContain('Idempotent-Replayed');
    // SCS_IDEMPOTENCY_IN_PROGRESS comes with Retry-After.
    expect(headersOf('createScenario', '409')).toContain('Retry-After');
    expect(headersOf('executeScenario', '409')).toContain('Retry-After');
  });

  it('describes If-Match with its quoted form', () => {
    const ifMatch = operation('updateScenario').parameters!.find((p) => p.in === 'header' && p.name === 'if-match')!;
    expect(ifMatch.example).toBe('"12.3"');
    expect(ifMatch.description).toMatch(/quotes included/);
  });
});

describe('openapi.yaml examples', () => {
  it('has problem examples with the status\'s title, a documented code and no placeholder, for every problem status of the scenario routes', () => {
    const codes = fs.readFileSync('docs/decisions.md', 'utf8');
    let count = 0;
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        const media = response.content?.['application/problem+json'];
        if (!media) continue;
        if (EXAMPLED.includes(op.operationId)) expect(media.examples, `${op.operationId} ${status}`).toBeDefined();
        for (const { value } of Object.values(media.examples ?? {})) {
          const at = `${op.operationId} ${status}`;
          expect(value.status, at).toBe(Number(status));
          expect(value.title, at).toBe(TITLES[Number(status)]);
          expect(codes, at).toContain(`\`${String(value.code)}\``);
          expect(JSON.stringify(value), at).not.toMatch(/"string"/);
          expect(value.instance, at).toMatch(/^\/(compliance|health|metrics)/);
          count++;
        }
      }
    }
    expect(count).toBeGreaterThan(50);
    const stale = Object.values(operation('updateScenario').responses['412']!.content!['application/problem+json']!.examples!)[0]!;
    expect(stale.value).toMatchObject({ code: 'SCS_PRECONDITION_FAILED', instance: '/compliance/scenarios/adult-kyc' });
  });

  it('has PATCH examples that the service applies as they say: a rule added, arrays replaced whole', async () => {
    const examples = operation('updateScenario').requestBody!.content['application/json']!.examples!;
    const create = operation('createScenario').requestBody!.content['application/json']!.examples!.challengeQuery!.value as { id: string };
    const app = await makeApp();
    try {
      const rules: Record<string, string[]> = {};
      for (const [name, { value }] of Object.entries(examples)) {
        await app.inject({ method: 'DELETE', url: `/compliance/scenarios/${create.id}`, headers: auth });
        expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: create })).statusCode).toBe(201);
        const res = await app.inject({ method: 'PATCH', url: `/compliance/scenarios/${create.id}`, headers: auth, payload: value });
        expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
        rules[name] = res.json().input.queryConfigurations.map((q: { id: string }) => q.id);
      }
      expect(rules.addRule).toEqual(['q-kyc', 'q-age', 'q-citizenship']);
      expect(rules.raiseAge).toEqual(['q-kyc', 'q-age']);
    } finally {
      await app.close();
    }
  }, 60_000);
});
