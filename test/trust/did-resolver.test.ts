/**
 * Issuer state lookups against a DID resolver that negotiates content as driver-did-iden3 does since February 2026
 * (test/trust/did-resolver-server.ts): it answers 406 to `Accept: application/json`, which the service sent until it
 * asked for a DID resolution result. Offline: 127.0.0.1 only.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateResolver, DID_RESOLUTION_MEDIA_TYPE } from '../../src/trust/did-resolver.js';
import { createDemoIssuer } from '../../src/trust/demo-issuer.js';
import { startDidResolver, type TestDidResolver } from './did-resolver-server.js';
import { startServer } from './servers.js';

let resolver: TestDidResolver;
let did: string;
let genesis: string;
const states: string[] = [];

const lookups = (resolverUrl = resolver.base) => createStateResolver({
  resolverUrl,
  fetch: (u, i) => fetch(u, i),
  timeoutMs: 5000,
  publishedCacheMs: 0,
  shortCacheMs: 0,
  clock: () => 0,
});

/** A GET with exactly these headers (fetch always adds an Accept header; node:http adds none). */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(`${resolver.url}${path}`, { headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    }).on('error', reject);
  });
}

beforeAll(async () => {
  resolver = await startDidResolver();
  const issuer = await createDemoIssuer({ seed: 'did-resolver-tests-issuer-000001', statusUrl: 'http://127.0.0.1:9/status' });
  did = issuer.did;
  genesis = await issuer.currentState();
  for (let i = 0; i < 3; i++) states.push((await issuer.advanceState()).state.value);
  resolver.publish(did, states[0]!);
  resolver.publish(did, states[1]!);
}, 60_000);

afterAll(async () => {
  await resolver?.close();
});

describe('the test resolver negotiates as driver-did-iden3', () => {
  const path = () => `/1.0/identifiers/${encodeURIComponent(did)}?state=${states[1]}`;

  it('answers 406 to application/json, with the resolution error the real one sends', async () => {
    const r = await get(path(), { accept: 'application/json' });
    expect(r.status).toBe(406);
    expect(r.type).toBe('application/did-resolution');
    expect(r.body).toBe('{"didDocument":null,"didResolutionMetadata":{"error":{"type":"https://www.w3.org/ns/did#REPRESENTATION_NOT_SUPPORTED"},' +
      '"contentType":"application/did-resolution","retrieved":"0001-01-01T00:00:00Z"},"didDocumentMetadata":{}}\n');
  });

  it('serves a DID resolution result for application/did-resolution, */* and no Accept header', async () => {
    const asked: Record<string, string>[] = [{ accept: 'application/did-resolution' }, { accept: '*/*' }, {}, { accept: 'text/html, application/did-resolution;q=0.5' }];
    for (const headers of asked) {
      const r = await get(path(), headers);
      expect(r.status).toBe(200);
      expect(r.type).toBe('application/did-resolution');
      const body = JSON.parse(r.body);
      expect(body.didResolutionMetadata).toMatchObject({ contentType: 'application/did-resolution', type: 'Iden3ResolutionMetadata' });
      expect(body.didDocument.verificationMethod[0]).toMatchObject({ id: `${did}#state-info`, type: 'Iden3StateInfo2023', published: true });
    }
  });

  it('serves the DID document alone for application/did+ld+json and application/did+json (without @context)', async () => {
    const ld = await get(path(), { accept: 'application/did+ld+json' });
    expect([ld.status, ld.type]).toEqual([200, 'application/did+ld+json']);
    expect(JSON.parse(ld.body)).toMatchObject({ '@context': expect.any(Array), id: did });
    const plain = await get(path(), { accept: 'application/did+json' });
    expect([plain.status, plain.type]).toEqual([200, 'application/did+json']);
    expect(JSON.parse(plain.body)).not.toHaveProperty('@context');
  });
});

describe('issuer state lookups', () => {
  it('ask for a DID resolution result, and read published, latest and replaced states', async () => {
    resolver.accepts.length = 0;
    const s = lookups();
    // On main the service asked with Accept: application/json and every lookup here was an error (HTTP 406).
    expect(await s.isPublished(did, states[0]!)).toBe(true); // replaced by states[1]
    expect(await s.isPublished(did, states[1]!)).toBe(true); // the latest
    expect(await s.latestState(did)).toBe(states[1]);
    expect(resolver.accepts.length).toBe(3);
    expect(new Set(resolver.accepts)).toEqual(new Set([DID_RESOLUTION_MEDIA_TYPE]));
  });

  it('words replaced and latest states as the real resolver does', async () => {
    const replaced = JSON.parse((await get(`/1.0/identifiers/${encodeURIComponent(did)}?state=${states[0]}`)).body).didDocument.verificationMethod[0];
    expect(replaced.info).toMatchObject({ id: did, state: states[0], replacedByState: states[1], replacedAtTimestamp: expect.stringMatching(/^[1-9]\d*$/) });
    expect(replaced).not.toHaveProperty('global');
    const latest = JSON.parse((await get(`/1.0/identifiers/${encodeURIComponent(did)}`)).body).didDocument.verificationMethod[0];
    expect(latest.info).toMatchObject({ state: states[1], replacedByState: '0'.repeat(64), replacedAtTimestamp: '0' });
    expect(latest.global).toMatchObject({ root: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('tell a state never published (404 NOT_FOUND) and the unpublished genesis state (published: false) from a published one', async () => {
    const s = lookups();
    const unknown = await get(`/1.0/identifiers/${encodeURIComponent(did)}?state=${states[2]}`);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).didResolutionMetadata.error).toEqual({ type: 'https://www.w3.org/ns/did#NOT_FOUND', message: 'state not found' });
    expect(await s.isPublished(did, states[2]!)).toBe(false);
    expect(JSON.parse((await get(`/1.0/identifiers/${encodeURIComponent(did)}?state=${genesis}`)).body).didDocument.verificationMethod[0])
      .not.toHaveProperty('info');
    expect(await s.isPublished(did, genesis)).toBe(false);
  });

  it('know no latest state of an identity that published none', async () => {
    const other = await createDemoIssuer({ seed: 'did-resolver-tests-issuer-000002', statusUrl: 'http://127.0.0.1:9/status' });
    expect(await lookups().latestState(other.did)).toBeUndefined();
  });

  it('say so when a resolver does not serve DID resolution results (406)', async () => {
    const picky = await startServer(async () => ({ status: 406, json: {} }));
    try {
      await expect(lookups(`${picky.url}/1.0/identifiers`).isPublished(did, states[1]!))
        .rejects.toThrow(/does not serve DID resolution results \(HTTP 406 to Accept: application\/did-resolution\)/);
    } finally {
      await picky.close();
    }
  });
});

// Issue 36: an answer "published" about another DID's other state made an MTP-only credential valid.
describe('an answer about another DID or another state', () => {
  /** A resolver that answers every request with the real one's answer about `about` (a DID and a state). */
  const lying = (about: () => { did: string; state: string }) => startServer(async (req) => {
    const asked = new URL(req.url ?? '/', 'http://x');
    const { did: other, state } = about();
    const real = await get(`/1.0/identifiers/${encodeURIComponent(other)}${asked.searchParams.has('state') ? `?state=${state}` : ''}`);
    return { status: real.status, text: real.body, headers: { 'content-type': DID_RESOLUTION_MEDIA_TYPE } };
  });

  it('another DID: a ResolverFailure, for a state and for the latest', async () => {
    const other = await createDemoIssuer({ seed: 'did-resolver-tests-issuer-000003', statusUrl: 'http://127.0.0.1:9/status' });
    const otherState = (await other.advanceState()).state.value;
    resolver.publish(other.did, otherState);
    const server = await lying(() => ({ did: other.did, state: otherState }));
    try {
      const s = lookups(server.url);
      await expect(s.isPublished(did, states[2]!)).rejects.toThrow(/answered about another DID than the one asked/);
      await expect(s.latestState(did)).rejects.toThrow(/answered about another DID than the one asked/);
    } finally {
      await server.close();
    }
  });

  it('another state of the same DID, said published: a ResolverFailure; its own state still reads as published', async () => {
    const server = await lying(() => ({ did, state: states[1]! }));
    try {
      const s = lookups(server.url);
      await expect(s.isPublished(did, states[2]!)).rejects.toThrow(/answered about another state than the one asked/);
      expect(await s.isPublished(did, states[1]!)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
