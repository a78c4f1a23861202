/** The Redis server the tests use, and a TCP proxy in front of it that a test stops and starts (never Redis itself). */
import net from 'node:net';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether Redis answers. When it does not, Redis tests are skipped with a message, unless REQUIRE_REDIS=1 (as in
 * .ci/run), where that is a failure.
 */
async function answers(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (err) {
    if (process.env.REQUIRE_REDIS === '1') throw new Error(`REQUIRE_REDIS=1 but Redis at ${REDIS_URL} does not answer: ${String(err)}`);
    process.stderr.write(`\n[skip] Redis at ${REDIS_URL} does not answer: Redis tests are skipped (${String(err)})\n`);
    return false;
  } finally {
    client.disconnect();
  }
}

export const redisAvailable = await answers();

/** A key prefix of its own per test run, so parallel runs never count each other's requests. */
export const freshPrefix = (name: string) => `test:${name}:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;

/** Every key under `prefix`. */
export async function keysUnder(prefix: string): Promise<string[]> {
  const client = new Redis(REDIS_URL);
  try {
    return await client.keys(`${prefix}*`);
  } finally {
    client.disconnect();
  }
}

export async function deleteUnder(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL);
  try {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
  } finally {
    client.disconnect();
  }
}

export interface RedisProxy {
  url: string;
  /** Closes the listener and every connection through it: Redis, as the instances see it, is gone. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Holds what clients send, closing nothing (a stalled Redis: no RST); `resume` forwards it. */
  stall(): void;
  resume(): void;
  /** Forwards what clients send `ms` late (0: at once). */
  delay(ms: number): void;
  /** Bytes clients sent while stalled. */
  readonly heldBytes: number;
  /** Client connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 to REDIS_URL's server. */
export async function redisProxy(): Promise<RedisProxy> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<net.Socket>();
  let held: Array<() => void> | undefined;
  let heldBytes = 0;
  let delayMs = 0;
  let connections = 0;
  const server = net.createServer((client) => {
    connections += 1;
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    // In order, as TCP: a chunk never overtakes one delayed before.
    let sent = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      const forward = () => { if (!upstream.destroyed) upstream.write(chunk); };
      if (held !== undefined) {
        heldBytes += chunk.length;
        held.push(forward);
        return;
      }
      const ms = delayMs;
      sent = sent.then(() => new Promise<void>((resolve) => setTimeout(resolve, ms))).then(forward);
    });
    client.on('close', () => upstream.destroy());
    upstream.pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const stop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    stop,
    start: () => listen(port),
    stall: () => { held ??= []; },
    resume: () => {
      const forwards = held ?? [];
      held = undefined;
      for (const forward of forwards) forward();
    },
    delay: (ms) => { delayMs = ms; },
    get heldBytes() { return heldBytes; },
    get connections() { return connections; },
    close: async () => {
      if (server.listening) await stop();
    },
  };
}
