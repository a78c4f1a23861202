/**
 * Starting and stopping the real server process: the one line of what it runs with, a one-line error for a PostgreSQL
 * it cannot use, and `npm start` stopping when npm itself gets SIGTERM.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';
import { killAll, runToExit, start, type Server } from './server-process.js';
import { VERIFIER_DID } from './zkp/fixtures.js';
import { at, only } from './elements.js';

afterAll(killAll);

type Line = Record<string, unknown> & { level: number; msg: string };
const logLines = (stdout: string): Line[] => stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

/** Starts the server with `env`, waits for its start-up line, stops it; that line and the warnings logged at start. */
async function startUp(env: Record<string, string>): Promise<{ server: Server; ready: Line; warnings: string[] }> {
  const server = await start({ API_TOKENS: 'startup-token-0123456789', ...env });
  const t0 = Date.now();
  while (!logLines(server.stdout()).some((l) => l.msg.startsWith('ready: ')) && Date.now() - t0 < 45_000) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const lines = logLines(server.stdout());
  const ready = lines.filter((l) => l.msg.startsWith('ready: '));
  return { server, ready: only(ready), warnings: lines.filter((l) => l.level === 40).map((l) => l.msg) };
}

async function stop(server: Server): Promise<void> {
  server.proc.kill('SIGTERM');
  const code = await server.exited;
  // On failure, the ending signal and the last words: a signal after 'stopped' is a crash in the process's teardown.
  expect(code, `ended by ${server.proc.signalCode}; stderr: ${server.stderr().slice(-2000)}; last lines: ${server.stdout().split('\n').slice(-6).join('\n')}`).toBe(0);
}

describe('the start-up line', () => {
  it('says the defaults: SQLite file, strict verification with no trusted issuer (and a warning naming TRUSTED_ISSUERS), both ZKP types off with the variable that enables each, the docs URL', async () => {
    const dataDir = tempDir();
    const { server, ready, warnings } = await startUp({ DATA_DIR: dataDir });
    expect(ready.msg).toBe(
      `ready: database SQLite ${dataDir}/scenarios.db; credential verification strict, 0 trusted issuers; ` +
      'OffChainZKP off (set ZKP_VERIFIER_DID and PUBLIC_BASE_URL to enable); OnChainZKP off (set CHAIN_RPC_URLS to enable); ' +
      'webhooks off (set WEBHOOK_SECRET to enable); attestations off (set ATTESTATION_JWKS or ATTESTATION_EIP712_KEY to enable); ' +
      `docs ${server.url}/docs`,
    );
    expect(ready).toMatchObject({
      level: 30, database: `SQLite ${dataDir}/scenarios.db`, verification: 'strict', trustedIssuers: 0,
      offChainZkp: false, onChainZkp: false, webhooks: 'off', attestations: [], docs: `${server.url}/docs`,
    });
    expect(warnings.filter((w) => w.includes('TRUSTED_ISSUERS'))).toEqual([
      expect.stringContaining('TRUSTED_ISSUERS is empty: every credential will fail the trusted-issuer check'),
    ]);
    // The docs URL it names is the docs.
    const docs = await fetch(ready.docs as string);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
    await stop(server);
  });

  it('says what is on: issuers counted with the demo issuer, OffChainZKP, OnChainZKP by chain (never its RPC URL), docs off; no issuer warning', async () => {
    const { server, ready, warnings } = await startUp({
      DATA_DIR: tempDir(),
      TRUSTED_ISSUERS: 'did:iden3:polygon:amoy:xBdqiqz3yVT79NEAuNaqKSDZ6a5V6q8Ph66i5d2tT,did:example:second',
      DEMO_ISSUER: '1',
      ZKP_VERIFIER_DID: VERIFIER_DID,
      PUBLIC_BASE_URL: 'https://compliance.example',
      CHAIN_RPC_URLS: 'eip155:31337=http://rpc-user:rpc-secret@127.0.0.1:1/api-key-123',
      DOCS_ENABLED: 'false',
    });
    expect(ready.msg).toBe(
      `ready: database ${ready.database as string}; credential verification strict, 3 trusted issuers; OffChainZKP on; ` +
      'OnChainZKP on (eip155:31337); webhooks off (set WEBHOOK_SECRET to enable); ' +
      'attestations on: JWS (key made for this run only), EIP-712 (key made for this run only); docs off (DOCS_ENABLED=false)',
    );
    expect(ready).toMatchObject({ trustedIssuers: 3, offChainZkp: true, onChainZkp: true, docs: null });
    expect(warnings.some((w) => w.includes('TRUSTED_ISSUERS'))).toBe(false);
    for (const secret of ['rpc-secret', 'api-key-123', 'rpc-user']) expect(server.stdout() + server.stderr()).not.toContain(secret);
    await stop(server);
  });

  it('says when verification is off or any issuer is trusted, without the issuer warning', async () => {
    for (const [env, says] of [
      [{ CREDENTIAL_VERIFICATION: 'off' }, 'credential verification off (CREDENTIAL_VERIFICATION=off)'],
      [{ TRUSTED_ISSUERS: '*' }, 'credential verification strict, any issuer trusted (TRUSTED_ISSUERS=*)'],
    ] as const) {
      const { server, ready, warnings } = await startUp({ DATA_DIR: tempDir(), ...env });
      expect(ready.msg).toContain(`; ${says}; `);
      expect(warnings.some((w) => w.includes('TRUSTED_ISSUERS'))).toBe(false);
      await stop(server);
    }
  });

  it.skipIf(!pgAvailable)('names the PostgreSQL host, port, database and schema, never the user', async () => {
    const schema = freshSchema('startup');
    try {
      const url = new URL(PG_URL);
      const { server, ready } = await startUp({ DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema });
      expect(ready.database).toBe(`PostgreSQL ${url.hostname}:${url.port || 5432}${url.pathname} schema ${schema}`);
      if (url.username) expect(server.stdout()).not.toContain(`${url.username}@`);
      await stop(server);
    } finally {
      await dropSchema(schema);
    }
  });
});

/**
 * dist/server.js with its stdout a terminal (a pseudo-terminal made by util-linux's `script`, in a process group of
 * its own): its output up to the start-up line, then SIGTERM to that group.
 */
async function onTerminal(env: Record<string, string>): Promise<string> {
  const proc = spawn('script', ['-qefc', `exec "${process.execPath}" dist/server.js`, '/dev/null'], {
    detached: true,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', MAX_EVENT_LOOP_DELAY_MS: '0', API_TOKENS: 'startup-token-0123456789', DATA_DIR: tempDir(), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => { out += d; });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const t0 = Date.now();
  while (!/ready: database[^\n]*\n/.test(out) && Date.now() - t0 < 45_000 && proc.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  process.kill(-proc.pid!, 'SIGTERM');
  await exited;
  return out;
}
const SCRIPT = fs.existsSync('/usr/bin/script');
if (!SCRIPT) console.warn('startup.test.ts: /usr/bin/script (util-linux) is absent: the terminal log tests are skipped');

describe.skipIf(!SCRIPT)('log lines on a terminal', () => {
  it('are pino-pretty\'s in development: level, message and fields on one line, no JSON', async () => {
    const out = await onTerminal({});
    const ready = out.split('\n').find((l) => l.includes('ready: database'));
    expect(ready, out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] \S*INFO\S*: \S*ready: database SQLite /);
    expect(ready).toContain('webhooks off (set WEBHOOK_SECRET to enable)');
    expect(out).not.toContain('{"level":');
  });

  it('are JSON with NODE_ENV=production, terminal or not', async () => {
    const out = await onTerminal({ NODE_ENV: 'production' });
    const ready = out.split('\n').find((l) => l.includes('ready: database'));
    expect(JSON.parse(ready!)).toMatchObject({ level: 30, msg: expect.stringMatching(/^ready: database /) });
  });
});

describe('a PostgreSQL the server cannot use', () => {
  /** Starts the server on `url`: it must exit 1 with one line on stderr, no stack trace, containing `says`. */
  async function refused(url: string, says: string): Promise<string> {
    const { code, stdout, stderr } = await runToExit({ HOST: '127.0.0.1', PORT: '0', API_TOKENS: 'startup-token-0123456789', DATABASE_URL: url });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
    expect(stderr).toMatch(/^configuration error: DATABASE_URL: PostgreSQL at /);
    expect(stderr).toContain(says);
    expect(stdout + stderr).not.toMatch(/\n\s+at /); // no stack trace anywhere
    return stderr;
  }

  it('a closed port: says nothing listens there and what to do', async () => {
    const line = await refused('postgres://postgres@127.0.0.1:1/test', 'at 127.0.0.1:1/test refused the connection: nothing listens there. Start PostgreSQL, or correct the host and port');
    expect(line).not.toContain('postgres@');
  });

  it.skipIf(!pgAvailable)('a database that does not exist: names it and says to create it', async () => {
    const url = new URL(PG_URL);
    url.pathname = `/no_such_db_${process.pid}`;
    await refused(url.href, `has no such database (database "no_such_db_${process.pid}" does not exist): create it (createdb), or name an existing database`);
  });

  it.skipIf(!pgAvailable)('a refused login: says so and what to correct, never the password', async () => {
    const url = new URL(PG_URL);
    url.username = 'no_such_role';
    url.password = 'pa55-w0rd-secret';
    const line = await refused(url.href, 'refused the login (');
    expect(line).toContain('correct the user or password, or allow them in the server\'s pg_hba.conf');
    expect(line).not.toContain('pa55-w0rd-secret');
  });
});

describe('npm start', () => {
  it('runs node itself (no shell between) with MALLOC_ARENA_MAX=2, and SIGTERM to npm stops the server', async () => {
    const env: Record<string, string | undefined> = {
      ...process.env, HOST: '127.0.0.1', PORT: '0', DATA_DIR: tempDir(), API_TOKENS: 'npm-start-token-0123456789', MAX_EVENT_LOOP_DELAY_MS: '0',
    };
    delete env.DATABASE_URL;
    const npm = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (d) => { out += d; });
    npm.stderr.resume();
    const npmExited = new Promise<number | null>((r) => npm.on('exit', r));
    // Closed once every writer of npm's output (npm and the server) has exited: then the output is all there.
    const outputClosed = new Promise((r) => npm.on('close', r));
    const t0 = Date.now();
    while (!/Server listening/.test(out) && Date.now() - t0 < 45_000) await new Promise((r) => setTimeout(r, 50));
    const listening = logLines(out).find((l) => l.msg.startsWith('Server listening'));
    expect(listening, out).toBeDefined();
    const pid = listening!.pid as number;
    // npm's child is the server itself: `sh -c` exec'd it.
    const ppid = Number(at(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') '), 1).split(' ')[1]);
    expect(ppid).toBe(npm.pid);
    expect(fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');

    npm.kill('SIGTERM');
    await npmExited;
    const gone = async () => {
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          return true;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    };
    const stopped = await gone();
    if (!stopped) process.kill(pid, 'SIGKILL');
    expect(stopped).toBe(true);
    await outputClosed;
    expect(logLines(out).some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM')).toBe(true);
  });
});
