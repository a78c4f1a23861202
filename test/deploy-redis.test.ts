/**
 * deploy/compose.yaml's Redis command run for real with the machine's redis-server (on a free port, its config file in
 * a temporary directory): it asks for the password, and the password is on no process's command line (`ps` shows those).
 * Without redis-server the test is skipped with a message, unless REQUIRE_REDIS=1 (CI), where that fails.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tempDir } from './helpers.js';

const haveRedis = (() => {
  try { execFileSync('redis-server', ['--version'], { stdio: 'ignore' }); return true; } catch { return false; }
})();
if (!haveRedis) console.warn('deploy-redis.test.ts: redis-server is absent, so the compose Redis command is not run');

const freePort = () => new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as net.AddressInfo;
    s.close(() => resolve(port));
  });
});

const redisCli = (port: number, ...args: string[]) => {
  try {
    return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', env: { PATH: process.env.PATH } }).trim();
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e).trim();
  }
};

describe.skipIf(!haveRedis && process.env.REQUIRE_REDIS !== '1')('deploy/compose.yaml: Redis started as the file says', () => {
  const children: ReturnType<typeof spawn>[] = [];
  afterAll(() => { for (const c of children) c.kill('SIGKILL'); });

  it('requires the password, which appears on no command line', async () => {
    const compose = parse(fs.readFileSync('deploy/compose.yaml', 'utf8'));
    const [shell, flag, script] = compose.services.redis.command as string[];
    const port = await freePort();
    const conf = path.join(tempDir('scs-redis-conf-'), 'redis.conf');
    // As Compose hands it to the container: `$$` is a literal `$`; here on a free loopback port and a temporary file.
    const run = script!.replaceAll('$$', '$').replaceAll('/tmp/redis.conf', conf) + ` --port ${port} --bind 127.0.0.1`;
    const password = `pw-${process.pid}-0123456789abcdef`;
    const child = spawn(shell!, [flag!, run], { env: { PATH: process.env.PATH, REDISCLI_AUTH: password }, stdio: 'ignore' });
    children.push(child);
    await expect.poll(() => redisCli(port, '--no-auth-warning', '-a', password, 'ping'), { timeout: 10_000 }).toBe('PONG');
    expect(redisCli(port, 'ping')).toMatch(/NOAUTH/);
    expect(redisCli(port, '--no-auth-warning', '-a', password, 'config', 'get', 'maxmemory-policy')).toMatch(/volatile-ttl/);
    expect(fs.statSync(conf).mode & 0o077).toBe(0);
    const commandLines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(commandLines).toContain(`redis-server 127.0.0.1:${port}`);
    expect(commandLines).not.toContain(password);
  }, 30_000);
});
