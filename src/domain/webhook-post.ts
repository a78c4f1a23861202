import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

type Post = (url: URL, headers: Record<string, string>, body: string, timeoutMs: number, lookup?: LookupFunction) => Promise<number>;

export class DeliveryTimeout extends Error {}

const ANSWER_BODY_MAX_BYTES = 64 * 1024;

/** One deadline to the end of the body: a receiver that stalls after its headers gets no more time. */
export const post: Post = (url, headers, body, timeoutMs, lookup) => new Promise((resolve, reject) => {
  const request = (url.protocol === 'https:' ? https : http).request(url, {
    method: 'POST',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    ...(lookup && { lookup }),
    // A pooled socket would skip the lookup and its check.
    agent: false,
  });
  let settled = false;
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
    const status = res.statusCode ?? 0;
    let read = 0;
    const done = () => {
      settle(() => resolve(status));
      request.destroy();
    };
    res.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read >= ANSWER_BODY_MAX_BYTES) done();
    });
    res.on('end', done);
    res.on('error', (err) => settle(() => reject(err)));
  });
  request.on('error', (err) => settle(() => reject(err)));
  request.end(body);
});
