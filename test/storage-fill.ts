/** Filling a server's storage for real, and checking that what it acknowledged was kept (test/storage-full.*.test.ts). */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { ADDRESS, credential, scenario } from './helpers.js';
import { call, type Reply, type Server } from './server-process.js';

const TOKEN = 'storage-full-token-0123456789';
export const serverEnv = { API_TOKENS: TOKEN, CREDENTIAL_VERIFICATION: 'off' };

/** A scenario of ~8 KB that does not compress. */
const bulky = (tag: string) => scenario({ name: tag, description: randomBytes(2048).toString('hex'), message: randomBytes(2000).toString('hex') });

/** What a server acknowledged: scenario id -> the ETag it answered last, and the execution ids it answered. */
export interface Acknowledged {
  etags: Map<string, string>;
  executions: string[];
}

/**
 * Writes until the storage refuses (at most `rounds` of each): creates, then PATCHes of what was created, then
 * executes. Answers what was acknowledged and every refusal.
 */
export async function fill(server: Server, rounds: number): Promise<Acknowledged & { refusals: Reply[] }> {
  const ack: Acknowledged = { etags: new Map(), executions: [] };
  const refusals: Reply[] = [];
  for (let i = 0; i < rounds && refusals.length === 0; i++) {
    const res = await call(server, TOKEN, 'POST', '/compliance/scenarios', { id: `s${i}`, input: bulky(`s${i}`) });
    if (res.status === 201) ack.etags.set(`s${i}`, res.headers.get('etag')!);
    else refusals.push(res);
  }
  for (const [id, etag] of [...ack.etags].slice(0, 5)) {
    const input = { description: randomBytes(2048).toString('hex'), message: randomBytes(2048).toString('hex') };
    const res = await call(server, TOKEN, 'PATCH', `/compliance/scenarios/${id}`, { input }, { 'if-match': etag });
    if (res.status === 200) ack.etags.set(id, res.headers.get('etag')!);
    else refusals.push(res);
  }
  const target = [...ack.etags.keys()][0]!;
  for (let i = 0, refused = false; i < rounds && !refused; i++) {
    const res = await call(server, TOKEN, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: target });
    if (res.status === 200) ack.executions.push(res.body[0].executionId);
    else refusals.push(res);
    refused = res.status !== 200;
  }
  return { ...ack, refusals };
}

/** After a restart: every acknowledged scenario with the ETag answered last, every acknowledged execution recorded. */
export async function expectKept(server: Server, ack: Acknowledged): Promise<void> {
  for (const [id, etag] of ack.etags) {
    const res = await call(server, TOKEN, 'GET', `/compliance/scenarios/${id}`);
    expect([id, res.status, res.headers.get('etag')]).toEqual([id, 200, etag]);
  }
  for (const id of ack.executions) expect([id, (await call(server, TOKEN, 'GET', `/compliance/executions/${id}`)).status]).toEqual([id, 200]);
}

/** The distinct "status code" pairs of some replies. */
export const codes = (replies: Reply[]) => [...new Set(replies.map((r) => `${r.status} ${r.body?.code}`))].sort();

/** Prints why a test that needs a small filesystem is skipped, and answers it. */
export function skipped(test: string, reason: string): { skipped: string } {
  process.stderr.write(`\n[skip] ${test}: ${reason}\n`);
  return { skipped: reason };
}

/**
 * A fresh tmpfs of `size` (e.g. '2m') on a new directory of the system's temporary directory (reachable by other
 * users, such as PostgreSQL's), or why there is none. `unmount` it when done.
 */
export function mountTmpfs(test: string, size: string): string | { skipped: string } {
  if (process.platform !== 'linux') return skipped(test, `tmpfs is Linux's (this is ${process.platform})`);
  if (process.getuid?.() !== 0) return skipped(test, 'mounting a tmpfs needs root (run the tests as root, as CI does, to include it)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scs-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    fs.rmdirSync(dir);
    return skipped(test, `mount -t tmpfs failed (a container without CAP_SYS_ADMIN?): ${String((err as Error).message).split('\n')[0]}`);
  }
  return dir;
}

export function unmount(dir: string): void {
  execFileSync('umount', ['-l', dir]);
  fs.rmdirSync(dir);
}

/**
 * Fills the storage, reads readiness, frees it (removes `filler`), reads readiness again and writes once more, then
 * kills the server with SIGKILL: what the storage tests then check against a restarted server.
 */
export async function fillFreeAndKill(server: Server, filler: string, rounds: number) {
  const filled = await fill(server, rounds);
  const ready = await call(server, TOKEN, 'GET', '/health/ready');
  fs.rmSync(filler);
  const readyAgain = await fetch(`${server.url}/health/ready`);
  const after = await call(server, TOKEN, 'POST', '/compliance/scenarios', { id: 'after', input: bulky('after') });
  if (after.status === 201) filled.etags.set('after', after.headers.get('etag')!);
  server.proc.kill('SIGKILL');
  await server.exited;
  return { filled, ready, readyAgain, after };
}
