import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyPolicy } from '../src/http/body-policy.js';
import { problemDetails } from '../src/http/errors.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };

describe('a route states its body policy in its config', () => {
  let app: FastifyInstance;
  const texts: string[] = [];
  beforeAll(async () => {
    app = Fastify({ logger: false });
    await app.register(bodyPolicy);
    await app.register(problemDetails);
    const ok = async () => ({ ok: true });
    app.post('/default', ok);
    app.post('/shallow', { config: { body: { maxDepth: 2, maxKeys: 3 } } }, ok);
    app.post('/small', { config: { body: { maxBytes: 16 } } }, ok);
    app.post('/stored', { config: { body: { storedAsSent: true } } }, ok);
    app.patch('/merge', { config: { body: { mergePatch: true } } }, ok);
    app.delete('/stored', { config: { body: { storedAsSent: true } } }, ok);
    app.post('/text', { config: { body: { onText: (_request, text) => texts.push(text) } } }, ok);
    await app.ready();
  });
  afterAll(async () => app.close());

  const send = (url: string, payload: string, headers = JSON_TYPE, method: 'POST' | 'PATCH' | 'PUT' | 'DELETE' = 'POST') =>
    app.inject({ method, url, payload, headers });

  it('limits depth and keys by the route\'s own figures, and by the defaults elsewhere', async () => {
    expect((await send('/shallow', '{"a":{"b":{}}}')).json()).toMatchObject({ code: 'SCS_TOO_DEEP', errors: [{ field: 'body.a.b' }] });
    expect((await send('/shallow', '{"a":1,"b":2,"c":3,"d":4}')).json()).toMatchObject({ code: 'SCS_TOO_MANY_KEYS', errors: [{ field: 'body' }] });
    expect((await send('/default', '{"a":{"b":{}}}')).statusCode).toBe(200);
  });

  it('refuses a body over the route\'s maxBytes with 413', async () => {
    expect((await send('/small', '{"a":"0123456789"}')).json()).toMatchObject({ status: 413, code: 'SCS_BODY_TOO_LARGE' });
    expect((await send('/default', '{"a":"0123456789"}')).statusCode).toBe(200);
  });

  it('refuses a number JSON.parse would change only where the body is stored as sent', async () => {
    expect((await send('/stored', '{"n":1e400}')).json()).toMatchObject({ code: 'SCS_VALIDATION', errors: [{ field: 'body.n' }] });
    expect((await send('/default', '{"n":1e400}')).statusCode).toBe(200);
  });

  it('takes a merge patch only where the route says so', async () => {
    expect((await send('/merge', '{"a":null}', MERGE, 'PATCH')).statusCode).toBe(200);
    expect((await send('/default', '{"a":null}', MERGE)).json()).toMatchObject({ status: 415, code: 'SCS_UNSUPPORTED_MEDIA_TYPE' });
  });

  it('refuses a merge patch by its content type before reading it, where the route takes none', async () => {
    const res = await send('/default', `{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`, MERGE);
    expect(res.json()).toMatchObject({ status: 415, code: 'SCS_UNSUPPORTED_MEDIA_TYPE' });
    expect(res.headers.connection).not.toBe('close');
  });

  it('answers 404 to a merge patch for an unknown route or method', async () => {
    expect((await send('/nope', '{}', MERGE)).json()).toMatchObject({ status: 404, code: 'SCS_ROUTE_NOT_FOUND' });
    expect((await send('/merge', '{}', MERGE, 'PUT')).json()).toMatchObject({ status: 404, code: 'SCS_ROUTE_NOT_FOUND' });
  });

  it('refuses a __proto__ key, and a constructor key holding prototype', async () => {
    for (const payload of ['{"__proto__":{"x":1}}', '{"a":{"constructor":{"prototype":{"x":1}}}}']) {
      expect((await send('/default', payload)).json()).toMatchObject({ status: 400, code: 'SCS_PROTOTYPE_KEY' });
    }
  });

  it('takes a DELETE\'s empty JSON body as no body', async () => {
    expect((await send('/stored', '', JSON_TYPE, 'DELETE')).statusCode).toBe(200);
  });

  it('refuses text a database cannot store only where the body is stored as sent', async () => {
    expect((await send('/stored', '{"s":"a\\u0000"}')).json()).toMatchObject({ code: 'SCS_VALIDATION', errors: [{ field: 'body.s' }] });
    expect((await send('/default', '{"s":"a\\u0000"}')).statusCode).toBe(200);
  });

  it('hands the text of a parsed body to onText, and of no refused one', async () => {
    await send('/text', '{"a": 1}');
    await send('/text', '{"a": ');
    expect(texts).toEqual(['{"a": 1}']);
  });
});
