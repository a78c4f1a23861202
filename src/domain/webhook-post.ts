import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

export class DeliveryTimeout extends Error {}

const ANSWER_BODY_MAX_BYTES = 64 * 1024;
/** An idle kept-alive connection is closed after this (sooner when the receiver's `Keep-Alive: timeout` says so). */
const IDLE_MS = 4000;
/** Idle connections kept per host and port: a target's widest window (TARGET_SLOTS_MAX). */
const IDLE_PER_HOST = 32;

/**
 * Kept-alive connections: a fast receiver gets its POSTs on connections already open, not a TCP connection (and a
 * TIME_WAIT port) each. A pool is keyed by host and port only, not by how its connections were looked up: tenants'
 * (guarded) targets have pools of their own, whose every connection resolves through the guarded lookup, so a tenant
 * naming the host of WEBHOOK_URL never gets a connection that skipped the check.
 */
export class Connections {
  private readonly open = { http: keptAlive(http.Agent), https: keptAlive(https.Agent) };
  private readonly guarded: { http: http.Agent; https: https.Agent };

  constructor(private readonly lookup: LookupFunction) {
    this.guarded = { http: keptAlive(http.Agent, lookup), https: keptAlive(https.Agent, lookup) };
  }

  /** How to reach `url`: a pooled connection, or a new one when a pooled one was found closed. */
  route(url: URL, guarded: boolean): Route {
    const agents = guarded ? this.guarded : this.open;
    return { agent: url.protocol === 'https:' ? agents.https : agents.http, ...(guarded && { lookup: this.lookup }) };
  }

  close(): void {
    for (const agent of [this.open.http, this.open.https, this.guarded.http, this.guarded.https]) agent.destroy();
  }
}

interface Route { agent: http.Agent; lookup?: LookupFunction }

function keptAlive<A extends http.Agent>(Agent: new (options: http.AgentOptions) => A, lookup?: LookupFunction): A {
  // An agent's options override a request's: every connection of a guarded agent is looked up by the guard.
  return new Agent({ keepAlive: true, timeout: IDLE_MS, maxFreeSockets: IDLE_PER_HOST, scheduling: 'lifo', ...(lookup && { lookup }) });
}

/** The request went out on a pooled connection that turned out closed (the receiver ended it while idle). */
class StaleConnection extends Error {}

/**
 * One deadline to the end of the body: a receiver that stalls after its headers gets no more time. A pooled
 * connection found closed before any answer is retried once on a new connection (not pooled, looked up as the route
 * says) within the same deadline: the receiver may have got the first one, which at-least-once allows (the
 * `webhook-id` is the same).
 */
export async function post(url: URL, headers: Record<string, string>, body: string, timeoutMs: number, route: Route): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  try {
    return await postOnce(url, headers, body, timeoutMs, route.agent, route.lookup);
  } catch (err) {
    if (!(err instanceof StaleConnection)) throw err;
    return postOnce(url, headers, body, Math.max(0, deadline - performance.now()), false, route.lookup);
  }
}

function postOnce(url: URL, headers: Record<string, string>, body: string, timeoutMs: number, agent: http.Agent | false, lookup?: LookupFunction): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      ...(lookup && { lookup }),
      agent,
    });
    let settled = false;
    let answered = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      settle(() => reject(new DeliveryTimeout()));
      request.destroy();
    }, timeoutMs);
    request.on('response', (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // A long answer is not read to its end: its connection is closed, not pooled.
        if (read >= ANSWER_BODY_MAX_BYTES) {
          settle(() => resolve(status));
          request.destroy();
        }
      });
      // Read to its end, the connection goes back to its pool (or is closed, without an agent).
      res.on('end', () => settle(() => resolve(status)));
      res.on('error', (err) => settle(() => reject(err)));
    });
    request.on('error', (err) => settle(() => reject(request.reusedSocket && !answered ? new StaleConnection(err.message) : err)));
    request.end(body);
  });
}
