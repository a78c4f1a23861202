/**
 * A small client of the service, typed by openapi-typescript from openapi.yaml (./openapi.d.ts, which
 * test/openapi.client.test.ts generates; not committed) through openapi-fetch. It reads response headers only by the
 * names the document declares for that operation and status, and problem fields by the Problem schema, without a
 * cast: so it compiles only while the document tells a client what the service sends. The test compiles it, then runs
 * it against the service.
 */
import createClient from 'openapi-fetch';
import type { paths } from './openapi.js';

/** The header names a response declares (the generated index signature `[name: string]: unknown` left out). */
type Declared<R> = R extends { headers: infer H } ? keyof { [K in keyof H as string extends K ? never : K]: H[K] } & string : never;

/** A header the document declares for response `R`: a name it does not declare does not compile. */
function header<R>(response: Response, name: Declared<R>): string | null {
  return response.headers.get(name);
}

type Scenario = paths['/compliance/scenarios/{scenarioId}'];
type Created = paths['/compliance/scenarios']['post']['responses'][201];
type Read = Scenario['get']['responses'][200];
type Patched = Scenario['patch']['responses'][200];
type Limited = paths['/compliance/scenarios']['get']['responses'][429];

export interface Seen {
  created: { id: string; etag: string | null; location: string | null; requestId: string | null };
  read: { etag: string | null; revision: number };
  stale: { status: number; code: string | undefined; title: string; detail: string | undefined };
  patched: { etag: string | null; rules: string[] };
  invalid: { status: number; code: string | undefined; fields: string[] };
  limited: { status: number; retryAfter: string | null; code: string | undefined };
}

/** Creates, reads and patches scenario `id` (a stale If-Match first), sends invalid rules, then lists until 429. */
export async function run(baseUrl: string, token: string, id: string): Promise<Seen> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
  const kyc = { id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' as const } };
  const input = { name: 'Adult KYC', type: 'ChallengeQuery' as const, queryConfigurations: [kyc], smartContractDeployments: [] };

  const created = await client.POST('/compliance/scenarios', { body: { id, input } });
  if (!created.data) throw new Error(`create answered ${created.response.status}: ${created.error?.detail}`);
  const read = await client.GET('/compliance/scenarios/{scenarioId}', { params: { path: { scenarioId: id } } });
  if (!read.data) throw new Error(`read answered ${read.response.status}`);
  const etag = header<Read>(read.response, 'ETag') ?? '';

  const age = { id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gte' as const } };
  const patch = { input: { queryConfigurations: [kyc, age] } };
  const stale = await client.PATCH('/compliance/scenarios/{scenarioId}', { params: { path: { scenarioId: id }, header: { 'if-match': '"0.0"' } }, body: patch });
  if (!stale.error) throw new Error('a stale If-Match was accepted');
  const patched = await client.PATCH('/compliance/scenarios/{scenarioId}', { params: { path: { scenarioId: id }, header: { 'if-match': etag } }, body: patch });
  if (!patched.data) throw new Error(`patch answered ${patched.response.status}: ${patched.error?.detail}`);

  const badAge = { ...age, query: { ...age.query, value: 'eighteen' } };
  const invalid = await client.POST('/compliance/scenarios', { body: { input: { ...input, queryConfigurations: [badAge] } } });
  if (!invalid.error) throw new Error('invalid rules were accepted');

  let limited = await client.GET('/compliance/scenarios');
  for (let i = 0; i < 20 && !limited.error; i++) limited = await client.GET('/compliance/scenarios');
  if (!limited.error) throw new Error('never rate-limited');

  return {
    created: {
      id: created.data.id,
      etag: header<Created>(created.response, 'ETag'),
      location: header<Created>(created.response, 'Location'),
      requestId: header<Created>(created.response, 'x-request-id'),
    },
    read: { etag, revision: read.data.revision },
    stale: { status: stale.response.status, code: stale.error.code, title: stale.error.title, detail: stale.error.detail },
    patched: { etag: header<Patched>(patched.response, 'ETag'), rules: patched.data.input.queryConfigurations.map((q) => q.id) },
    invalid: { status: invalid.response.status, code: invalid.error.code, fields: (invalid.error.errors ?? []).map((e) => e.field) },
    limited: { status: limited.response.status, retryAfter: header<Limited>(limited.response, 'Retry-After'), code: limited.error.code },
  };
}
