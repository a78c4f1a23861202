/**
 * The server process on storage that really fills: its writes fail in write(2), as on a full disk, and every write it
 * acknowledged must be there after a restart. Two ways to fill:
 * - a limit on the size of each file the process writes (`ulimit -f`, RLIMIT_FSIZE): any user, any POSIX system;
 *   SQLite then answers SQLITE_FULL (a short write) or SQLITE_IOERR_WRITE (EFBIG);
 * - a small tmpfs mounted for the test: a real full filesystem (ENOSPC, SQLITE_FULL). Mounting needs root (CI runs
 *   as root); anyone else gets a line saying why it is skipped, and the other two tests still fill for real.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADDRESS, credential, scenario, tempDir } from './helpers.js';
import { call, killAll, start, type Reply, type Server } from './server-process.js';

const TOKEN = 'storage-full-token-0123456789';
const env = (dataDir: string) => ({ DATA_DIR: dataDir, API_TOKENS: TOKEN, CREDENTIAL_VERIFICATION: 'off' });
/** ~8 KB that does not compress. */
const bulky = (tag: string) => scenario({ name: tag, description: randomBytes(2048).toString('hex'), message: randomBytes(2000).toString('hex') });

const mounts: string[] = [];
afterAll(() => {
  killAll();
  for (const m of mounts) execFileSync('umount', ['-l', m]);
});

/** What a server acknowledged: scenario id -> ETag, and the execution ids it answered. */
interface Acknowledged {
  etags: Map<string, string>;
  executions: string[];
}

/**
 * Writes until the storage refuses (bounded): creates, then PATCHes of what was created, then executes. Answers what
 * was acknowledged and every refusal; a refusal must be a 503, never a 2xx for nothing nor a 500.
 */
async function fill(server: Server, rounds: number): Promise<Acknowledged & { refusals: Reply[] }> {
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
async function expectKept(server: Server, ack: Acknowledged): Promise<void> {
  for (const [id, etag] of ack.etags) {
    const res = await call(server, TOKEN, 'GET', `/compliance/scenarios/${id}`);
    expect([id, res.status, res.headers.get('etag')]).toEqual([id, 200, etag]);
  }
  for (const id of ack.executions) expect([id, (await call(server, TOKEN, 'GET', `/compliance/executions/${id}`)).status]).toEqual([id, 200]);
}

const codes = (replies: Reply[]) => [...new Set(replies.map((r) => `${r.status} ${r.body?.code}`))].sort();

describe('the server on storage that fills', () => {
  it('with a file size limit (ulimit -f): refuses with 503 what it cannot commit, and keeps all it acknowledged', async () => {
    const dataDir = tempDir();
    // 2048 blocks (1 or 2 MB, as the shell counts them): room for the schema and a few dozen scenarios.
    let server = await start(env(dataDir), { shell: 'ulimit -f 2048' });
    const filled = await fill(server, 400);
    const ready = await fetch(`${server.url}/health/ready`);
    server.proc.kill('SIGKILL');
    await server.exited;

    server = await start(env(dataDir));
    await expectKept(server, filled);
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
    expect(filled.etags.size).toBeGreaterThan(10);
    expect(filled.refusals.length).toBeGreaterThanOrEqual(2); // a write of each kind was tried on a full file
    expect(codes(filled.refusals).every((c) => c === '503 SCS_STORAGE_FULL' || c === '503 SCS_DATABASE_UNAVAILABLE')).toBe(true);
    expect(ready.status).toBe(503);
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }, 120_000);

  const mountable = mountTmpfs();
  it.skipIf(typeof mountable !== 'string')(
    'on a full tmpfs: answers 503 SCS_STORAGE_FULL, is not ready, recovers when space is freed, and keeps all it acknowledged',
    async () => {
      const mount = mountable as string;
      const filler = path.join(mount, 'filler');
      fs.writeFileSync(filler, randomBytes(512 * 1024));
      const dataDir = path.join(mount, 'data');
      let server = await start(env(dataDir));
      const filled = await fill(server, 400);
      const ready = await call(server, TOKEN, 'GET', '/health/ready');
      // Space freed: ready again without a request failing first, and writes are taken.
      fs.rmSync(filler);
      const readyAgain = await fetch(`${server.url}/health/ready`);
      const after = await call(server, TOKEN, 'POST', '/compliance/scenarios', { id: 'after', input: bulky('after') });
      if (after.status === 201) filled.etags.set('after', after.headers.get('etag')!);
      server.proc.kill('SIGKILL');
      await server.exited;

      server = await start(env(dataDir));
      await expectKept(server, filled);
      expect(filled.etags.size).toBeGreaterThan(10);
      expect(codes(filled.refusals)).toEqual(['503 SCS_STORAGE_FULL']);
      expect(filled.refusals.length).toBeGreaterThanOrEqual(2);
      expect(filled.refusals.every((r) => r.headers.get('retry-after') === '30')).toBe(true);
      expect([ready.status, ready.body.code]).toEqual([503, 'SCS_STORAGE_FULL']);
      expect(readyAgain.status).toBe(200);
      expect(after.status).toBe(201);
      server.proc.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    },
    120_000,
  );
});

/** A fresh 2 MiB tmpfs (unmounted after the run), or why there is none. */
function mountTmpfs(): string | { skipped: string } {
  const why = (reason: string) => {
    process.stderr.write(`\n[skip] the full-tmpfs test: ${reason}; the ulimit -f and max_page_count tests fill storage without it\n`);
    return { skipped: reason };
  };
  if (process.platform !== 'linux') return why(`tmpfs is Linux's (this is ${process.platform})`);
  if (process.getuid?.() !== 0) return why('mounting a tmpfs needs root (run the tests as root, as CI does, to include it)');
  const dir = tempDir('tmpfs-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    return why(`mount -t tmpfs failed (a container without CAP_SYS_ADMIN?): ${String((err as Error).message).split('\n')[0]}`);
  }
  mounts.push(dir);
  return dir;
}
