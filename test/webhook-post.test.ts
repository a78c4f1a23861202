/**
 * A webhook POST on kept-alive connections: a receiver gets many POSTs on one connection; a tenant's (guarded) POST
 * never rides a connection that the operator's (unguarded) pool opened to the same host; a pooled connection found
 * closed is retried once on a new one.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Connections, post } from '../src/domain/webhook-post.js';
import { PrivateTargetRefused, guardedLookup } from '../src/domain/webhook-guard.js';

/** Answers 204; `answer` may decide otherwise. Counts connections and requests per connection. */
async function receiver(answer?: (req: http.IncomingMessage, res: http.ServerResponse, nth: number) => void) {
  const perSocket = new WeakMap<Socket, number>();
  const stats = { connections: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    const nth = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, nth);
    req.resume();
    req.on('end', () => {
      stats.requests += 1;
      if (answer) answer(req, res, nth);
      else {
        res.statusCode = 204;
        res.end();
      }
    });
  });
  server.on('connection', () => { stats.connections += 1; });
  // Every interface, both families: `localhost` reaches it whichever address it resolves to first.
  await new Promise<void>((r) => server.listen(0, r));
  const port = (server.address() as AddressInfo).port;
  return { stats, port, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** Resolves every name to 127.0.0.1, which the guard refuses. */
const toLoopback = guardedLookup((_hostname, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]));

describe('webhook POSTs on kept-alive connections', () => {
  const cleanup: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('sends many POSTs to one receiver on one connection', async () => {
    const hook = await receiver();
    const connections = new Connections(toLoopback);
    cleanup.push(hook.close, () => connections.close());
    const url = new URL(`http://127.0.0.1:${hook.port}/hook`);
    for (let i = 0; i < 20; i++) expect(await post(url, {}, '{}', 5000, connections.route(url, false))).toBe(204);
    expect(hook.stats.requests).toBe(20);
    // One after the other: each finds the previous one's connection free (a second one at most, should the pool lag).
    expect(hook.stats.connections).toBeLessThanOrEqual(2);
  });

  it('looks up every connection of a tenant\'s target: none of the operator\'s pool to the same host is used', async () => {
    const hook = await receiver();
    const connections = new Connections(toLoopback);
    cleanup.push(hook.close, () => connections.close());
    const url = new URL(`http://localhost:${hook.port}/hook`);
    // The operator's WEBHOOK_URL is trusted: its connection is open and pooled.
    expect(await post(url, {}, '{}', 5000, connections.route(url, false))).toBe(204);
    // A tenant naming the same host and port is looked up by the guard, which refuses it.
    await expect(post(url, {}, '{}', 5000, connections.route(url, true))).rejects.toBeInstanceOf(PrivateTargetRefused);
    expect(hook.stats.requests).toBe(1);
  });

  it('retries once on a new connection when a pooled one turns out closed before any answer', async () => {
    // The second request on a connection finds it closed, as when a receiver ends an idle connection as the POST arrives.
    const hook = await receiver((req, res, nth) => {
      if (nth === 2) {
        req.socket.destroy();
        return;
      }
      res.statusCode = 204;
      res.end();
    });
    const connections = new Connections(toLoopback);
    cleanup.push(hook.close, () => connections.close());
    const url = new URL(`http://127.0.0.1:${hook.port}/hook`);
    expect(await post(url, {}, '{}', 5000, connections.route(url, false))).toBe(204);
    expect(await post(url, {}, '{}', 5000, connections.route(url, false))).toBe(204);
    // The first POST, the one the closed connection took, and its retry on a new connection.
    expect(hook.stats).toEqual({ requests: 3, connections: 2 });
  });
});
