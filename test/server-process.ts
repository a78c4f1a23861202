/** Starting the real server process (`node dist/server.js`, as the README does) for end-to-end tests. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

export interface Server {
  proc: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** Kills every server a test left running. */
export function killAll(): void {
  for (const p of running) p.kill('SIGKILL');
}

/**
 * Starts dist/server.js on 127.0.0.1 and a free port; resolves once it listens (the port comes from its log line).
 * `detached`: in a process group of its own (whose id is its pid), as a service manager starts it. `shell`: a POSIX sh
 * command run before (e.g. `ulimit -f 2048`, a limit on the size of each file the server writes). `npm`: `npm start`, as
 * the README runs it (npm and, below it, node: `proc` is npm).
 */
export function start(env: Record<string, string>, { detached = false, shell = '', npm = false } = {}): Promise<Server> {
  const [command, args] = npm
    ? ['npm', ['start', '--silent']]
    : shell
      ? ['/bin/sh', ['-c', `${shell} && exec "$0" dist/server.js`, process.execPath]]
      : [process.execPath, ['dist/server.js']];
  const proc = spawn(command, args, {
    detached,
    // Load shedding off unless a test asks for it (as in makeApp): a busy test machine is not an overloaded service.
    env: {
      PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', MAX_EVENT_LOOP_DELAY_MS: '0',
      ...(npm && { HOME: process.env.HOME ?? '/tmp' }), // npm reads its configuration there
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => {
    running.delete(proc);
    resolve(code);
  }));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}\n${err}`)), 60_000);
    proc.stderr!.on('data', (d) => { err += d; });
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1]!, stdout: () => out, stderr: () => err, exited });
      }
    });
    exited.then((code) => reject(new Error(`server exited with ${code}:\n${out}\n${err}`)));
  });
}

/** Runs dist/server.js with `env` (and PATH only) until it exits, as a start that must fail does: its code and output. */
export function runToExit(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, ['dist/server.js'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => { stdout += d; });
  proc.stderr!.on('data', (d) => { stderr += d; });
  // 'close', not 'exit': the output is complete only once the pipes are.
  return new Promise((resolve) => proc.on('close', (code) => {
    running.delete(proc);
    resolve({ code, stdout, stderr });
  }));
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  ms: number;
}

/** One JSON request with a bearer token. */
export async function call(server: Server, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const t0 = performance.now();
  const res = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, ms: performance.now() - t0 };
}

/** `npm run build`, as `npm install` does (`prepare`) before the README's `npm start` (skipped when E2E_SKIP_BUILD=1 and dist is known fresh). */
export function build(): void {
  if (process.env.E2E_SKIP_BUILD === '1') return;
  execFileSync('npm', ['run', 'build'], { stdio: 'pipe' });
}
