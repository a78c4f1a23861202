/**
 * The server process on storage that really fills: its writes fail in write(2), as on a full disk, and every write it
 * acknowledged must be there after a restart. Two ways to fill:
 * - a limit on the size of each file the process writes (`ulimit -f`, RLIMIT_FSIZE): any user, any POSIX system;
 *   SQLite then answers SQLITE_FULL (a short write) or SQLITE_IOERR_WRITE (EFBIG);
 * - a small tmpfs mounted for the test: a real full filesystem (ENOSPC, SQLITE_FULL). Mounting needs root (CI runs
 *   as root); anyone else gets a line saying why it is skipped, and the other two tests still fill for real.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { killAll, start } from './server-process.js';
import { codes, expectKept, fill, fillFreeAndKill, mountTmpfs, serverEnv, unmount } from './storage-fill.js';

const env = (dataDir: string) => ({ ...serverEnv, DATA_DIR: dataDir });
const TMPFS_TEST = 'the full-tmpfs test (the ulimit -f and max_page_count tests fill storage without it)';
const mountable = mountTmpfs(TMPFS_TEST, '4m');
afterAll(() => {
  killAll();
  if (typeof mountable === 'string') unmount(mountable);
});

describe('the server on storage that fills', () => {
  it('with a file size limit (ulimit -f): refuses with 503 what it cannot commit, and keeps all it acknowledged', async () => {
    const dataDir = tempDir();
    // 4096 blocks (2 or 4 MB, as the shell counts them): room for the schema and a few dozen scenarios (2048 left room
    // for only 10 once this round's migrations and writes had grown; the test wants more than 10 acknowledged).
    let server = await start(env(dataDir), { shell: 'ulimit -f 4096' });
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

  it.skipIf(typeof mountable !== 'string')(
    'on a full tmpfs: answers 503 SCS_STORAGE_FULL, is not ready, recovers when space is freed, and keeps all it acknowledged',
    async () => {
      const mount = mountable as string;
      const filler = path.join(mount, 'filler');
      // Freed, it must hold the database's growth as the WAL is checkpointed into it (the WAL filled the rest) as well
      // as readiness's probe and one more write: half the filesystem does with every migration's tables.
      fs.writeFileSync(filler, randomBytes(2 * 1024 * 1024));
      const dataDir = path.join(mount, 'data');
      let server = await start(env(dataDir));
      // Space freed: ready again without a request failing first, and writes are taken.
      const { filled, ready, readyAgain, after } = await fillFreeAndKill(server, filler, 400);

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
