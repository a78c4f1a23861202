/**
 * What the browser tests share: Debian's chromium (/usr/bin/chromium, never a downloaded browser) driven by
 * playwright-core, the skip-or-fail rule when it is absent, and a server process stopped gently, then killed.
 * The console's pages (sign-in, axe-core, screenshots) are in test/console-harness.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { Browser } from 'playwright-core';

/** CHROMIUM_PATH only exists to exercise the skip (e.g. CHROMIUM_PATH=/nonexistent). */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = fs.existsSync(CHROMIUM);
/** REQUIRE_BROWSER=1 (CI): a missing browser fails the test instead of skipping it. */
const browserRequired = process.env.REQUIRE_BROWSER === '1';
export const runBrowserTests = haveBrowser || browserRequired;

/** Says once, on the test's output, that `file`'s browser test is skipped (or failing) and how to install chromium. */
export function sayIfNoBrowser(file: string, what: string): void {
  if (haveBrowser) return;
  const message = `${file}: ${CHROMIUM} is absent, so the ${what} browser test is ${browserRequired ? 'FAILING (REQUIRE_BROWSER=1)' : 'SKIPPED'}; ` +
    'install it with: apt-get update && apt-get install -y chromium';
  (browserRequired ? console.error : console.warn)(message);
}

export async function launchBrowser(): Promise<Browser> {
  if (!haveBrowser) throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is absent: apt-get update && apt-get install -y chromium`);
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

export interface ServerProcess {
  proc: ChildProcess;
  url: string;
  output: () => string;
}

/** `node dist/server.js` on `host` and a free port; resolves with its URL once it listens (stdout or stderr). */
export function startServer(env: Record<string, string>, host = '127.0.0.1'): Promise<ServerProcess> {
  const proc = spawn(process.execPath, ['dist/server.js'], {
    env: { PATH: process.env.PATH ?? '', HOST: host, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = new RegExp(`Server listening at (http://${host.replaceAll('.', '\\.')}:\\d+)`).exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1]!, output: () => out });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${out}`));
    });
  });
}

/** SIGTERM, then SIGKILL if the process has not exited within 5 s. */
export async function stopServer(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.proc.exitCode !== null) return;
  const exited = new Promise((resolve) => server.proc.once('exit', resolve));
  server.proc.kill('SIGTERM');
  const timer = setTimeout(() => server.proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
