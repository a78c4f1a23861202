/** GET /compliance/credential-types: the held types' attribute trees, what the console's rule editor offers. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { auth, makeApp, scenario, tempDir } from './helpers.js';
import { localJwks, type LocalJwks } from './jwks.js';

interface Node { name: string; path: string; datatype: string; valueKind: string; operators: string[]; attributes?: Node[] }
interface Held { type: string; open: boolean; attributes: Node[] }

const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.attributes ?? [])]);

describe('GET /compliance/credential-types', () => {
  let app: FastifyInstance;
  let jwks: LocalJwks;

  beforeAll(async () => {
    jwks = await localJwks();
    const file = path.join(tempDir(), 'documents.json');
    fs.writeFileSync(file, JSON.stringify({
      'https://example.com/por.jsonld': {
        '@context': [{
          ProofOfResidence: {
            '@id': 'urn:por',
            '@context': {
              xsd: 'http://www.w3.org/2001/XMLSchema#',
              country: { '@id': 'urn:c', '@type': 'xsd:string' },
              since: { '@id': 'urn:s', '@type': 'xsd:dateTime' },
              verified: { '@id': 'urn:v', '@type': 'xsd:boolean' },
              rooms: { '@id': 'urn:p', '@type': 'xsd:positiveInteger' },
              debt: { '@id': 'urn:n', '@type': 'xsd:negativeInteger' },
              address: { '@id': 'urn:a', '@context': 'https://example.com/address.jsonld' },
            },
          },
          Referenced: { '@id': 'urn:r', '@context': 'https://example.com/elsewhere.jsonld' },
        }],
      },
    }));
    app = await makeApp({ JSONLD_DOCUMENTS_FILE: file, API_TOKENS: 'test-token-0123456789abcdef', ...jwks.env });
  });
  afterAll(async () => {
    await app?.close();
    jwks?.close();
  });

  const list = async (headers: Record<string, string> = auth) => app.inject({ method: 'GET', url: '/compliance/credential-types', headers });

  it('lists the bundled IDInformation with its attribute tree, datatypes and operators', async () => {
    const res = await list();
    expect(res.statusCode, res.body).toBe(200);
    const items = (res.json() as { items: Held[] }).items;
    const id = items.find((t) => t.type === 'IDInformation');
    expect(id?.open).toBe(false);
    const nodes = flat(id!.attributes);
    const personal = nodes.find((n) => n.path === 'personalData');
    expect(personal).toMatchObject({ datatype: 'object', operators: [] });
    expect(personal!.attributes!.map((n) => n.path)).toContain('personalData.age');
    expect(nodes.find((n) => n.path === 'personalData.age')).toMatchObject({
      datatype: 'xsd:integer', valueKind: 'number', operators: expect.arrayContaining(['$gte', '$between', '$in']),
    });
    const review = nodes.find((n) => n.path === 'reviewAnswer');
    expect(review).toMatchObject({ datatype: 'xsd:string', valueKind: 'string' });
    expect(review!.operators).not.toContain('$gte');
    expect(nodes.find((n) => n.path === 'isSandbox')).toMatchObject({ datatype: 'xsd:boolean', valueKind: 'boolean', operators: ['$eq', '$ne', '$exists'] });
    // The JSON-LD keywords' aliases are not attributes.
    expect(nodes.map((n) => n.name)).not.toContain('id');
  });

  it('lists the types of JSONLD_DOCUMENTS_FILE: dates, booleans, a context given by reference as open', async () => {
    const items = (await list()).json<{ items: Held[] }>().items;
    const por = flat(items.find((t) => t.type === 'ProofOfResidence')!.attributes);
    expect(por.find((n) => n.path === 'since')).toMatchObject({ datatype: 'xsd:dateTime', valueKind: 'date', operators: expect.arrayContaining(['$lt', '$between']) });
    expect(por.find((n) => n.path === 'since')!.operators).not.toContain('$in');
    expect(por.find((n) => n.path === 'address')).toMatchObject({ datatype: 'open', valueKind: 'any' });
    expect(items.find((t) => t.type === 'Referenced')).toEqual({ type: 'Referenced', open: true, attributes: [] });
    expect(items.map((t) => t.type)).toEqual([...items.map((t) => t.type)].sort((a, b) => a.localeCompare(b)));
  });

  it('offers only what create accepts: a rule built from each listed number attribute and operator is created', async () => {
    const items = (await list()).json<{ items: Held[] }>().items;
    const age = flat(items.find((t) => t.type === 'IDInformation')!.attributes).find((n) => n.path === 'personalData.age')!;
    const values: Record<string, unknown> = { $in: [18, 21], $nin: [1], $between: [18, 65], $nonbetween: [0, 17], $exists: true };
    const queryConfigurations = age.operators.map((operator, i) => ({
      id: `q${i}`, query: { type: 'IDInformation', requestId: i + 1, attribute: age.path, operator, value: values[operator] ?? 18 },
    }));
    const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'every-op', input: scenario({ queryConfigurations }) } });
    expect(res.statusCode, res.body).toBe(201);
  });

  it('types xsd:positiveInteger and xsd:negativeInteger as numbers, with the ordered operators', async () => {
    const por = flat((await list()).json<{ items: Held[] }>().items.find((t) => t.type === 'ProofOfResidence')!.attributes);
    for (const path of ['rooms', 'debt']) {
      expect(por.find((n) => n.path === path), path).toMatchObject({ valueKind: 'number', operators: expect.arrayContaining(['$lt', '$gte', '$between']) });
    }
  });

  it('says which operators each scenario type refuses whatever the datatype: OnChainZKP $lte and $gte', async () => {
    const types = (await list()).json<{ scenarioTypes: { type: string; refusedOperators: string[] }[] }>().scenarioTypes;
    expect(types.map((t) => t.type).sort()).toEqual(['ChallengeQuery', 'OffChainZKP', 'OnChainZKP']);
    expect(types.find((t) => t.type === 'OnChainZKP')!.refusedOperators.sort()).toEqual(['$gte', '$lte']);
    expect(types.find((t) => t.type === 'ChallengeQuery')!.refusedOperators).toEqual([]);
  });

  it('offers only what create accepts for string, date, boolean and number attributes of a ChallengeQuery', async () => {
    const items = (await list()).json<{ items: Held[]; scenarioTypes: { type: string; refusedOperators: string[] }[] }>();
    const refused = new Set(items.scenarioTypes.find((t) => t.type === 'ChallengeQuery')!.refusedOperators);
    const por = flat(items.items.find((t) => t.type === 'ProofOfResidence')!.attributes);
    const sample: Record<string, (op: string) => unknown> = {
      string: (op) => (op === '$in' || op === '$nin' ? ['DE', 'FR'] : 'DE'),
      date: (op) => (op === '$between' || op === '$nonbetween' ? ['2000-01-01', '2020-01-01'] : '2000-01-01'),
      boolean: () => true,
      number: (op) => (op === '$in' || op === '$nin' ? [1, 2] : op === '$between' || op === '$nonbetween' ? [1, 5] : 3),
    };
    let n = 0;
    for (const path of ['country', 'since', 'verified', 'rooms']) {
      const node = por.find((x) => x.path === path)!;
      const queryConfigurations = node.operators.filter((op) => !refused.has(op)).map((operator) => {
        n += 1;
        return { id: `q${n}`, query: { type: 'ProofOfResidence', requestId: n, attribute: path, operator, value: operator === '$exists' ? true : sample[node.valueKind]!(operator) } };
      });
      expect(queryConfigurations.length, path).toBeGreaterThan(0);
      const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: `ops-${path}`, input: scenario({ queryConfigurations }) } });
      expect(res.statusCode, `${path}: ${res.body}`).toBe(201);
    }
  });

  it('needs scenarios:read, as scenario reads do', async () => {
    expect((await list({})).statusCode).toBe(401);
    const writer = await jwks.sign({ scope: 'scenarios:write' }, 'writer');
    const refused = await list({ authorization: `Bearer ${writer}` });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    const reader = await jwks.sign({ scope: 'scenarios:read' }, 'reader');
    expect((await list({ authorization: `Bearer ${reader}` })).statusCode).toBe(200);
  });
});
