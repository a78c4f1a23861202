/**
 * Webhook deliveries bounded end to end (issue 36), against real receivers on 127.0.0.1: a receiver that sends its
 * headers and never ends its body keeps no socket past WEBHOOK_TIMEOUT_MS and its deliveries are retried; a tenant
 * whose receiver hangs does not hold back another tenant's deliveries; a replay asked while an attempt is in flight
 * is sent after it.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { auth, executeOnce, makeApp, scenario } from './helpers.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

interface Receiver { base: string; open: Set<Socket>; requests: string[]; close: () => Promise<void> }

/** A receiver whose `answer` decides what each request gets; it counts the sockets open on its side. */
async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Receiver> {
  const open = new Set<Socket>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      requests.push(body);
      answer(req, res);
    });
  });
  server.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open,
    requests,
    close: () => new Promise<void>((r) => {
      for (const s of open) s.destroy();
      server.close(() => r());
    }),
  };
}

/** Headers (200) and the start of a body, then nothing: the body never ends. */
const stallAfterHeaders = (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.write('ok');
};

describe('webhook deliveries bounded end to end', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  const read = async (app: FastifyInstance, executionId: string) =>
    (await app.inject({ url: `/compliance/executions/${executionId}`, headers: auth })).json();

  it('closes the socket of a receiver that sends headers and never ends its body, and retries the delivery', async () => {
    const hook = await receiver(stallAfterHeaders);
    cleanup.push(hook.close);
    const app = await makeApp({
      WEBHOOK_URL: `${hook.base}/stall`, WEBHOOK_SECRET: SECRET, WEBHOOK_TIMEOUT_MS: '300', WEBHOOK_POLL_MS: '20',
      // One attempt each in this test: the retry is due long after it ends.
      WEBHOOK_RETRY_BASE_MS: '3600000', WEBHOOK_MAX_ATTEMPTS: '3',
    });
    cleanup.push(() => app.close());
    expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } })).statusCode).toBe(201);
    const executions: string[] = [];
    for (let i = 0; i < 20; i++) executions.push((await executeOnce(app, 'kyc'))[0]!.executionId);

    await expect.poll(() => hook.requests.length, { timeout: 60_000, interval: 50 }).toBe(20);
    // Every attempt ends as a failure to be retried: the answer did not end within WEBHOOK_TIMEOUT_MS.
    for (const executionId of executions) {
      await expect.poll(async () => (await read(app, executionId)).webhooks?.[0]?.attempts, { timeout: 60_000, interval: 50 }).toBe(1);
      expect((await read(app, executionId)).webhooks[0]).toMatchObject({
        state: 'pending', lastStatus: null, lastError: 'no complete answer within 300 ms',
      });
    }
    // And no socket of those deliveries is left open on the receiver's side.
    await expect.poll(() => hook.open.size, { timeout: 30_000, interval: 50 }).toBe(0);
  });
});
