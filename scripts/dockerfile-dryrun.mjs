#!/usr/bin/env node
/**
 * Runs the Dockerfile's steps without a Docker engine (CI has none): each stage gets a clean directory standing
 * for the image's root; COPY, WORKDIR, ENV and RUN are carried out there (paths under /app and /data are mapped
 * into it; apt-get lines, which install the build toolchain this machine already has, are skipped and said so);
 * then the final stage's CMD is started and its HEALTHCHECK command must pass, and SIGTERM must stop it with 0.
 *
 *   node scripts/dockerfile-dryrun.mjs [Dockerfile]
 */
import { execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const context = process.cwd();
const dockerfile = fs.readFileSync(process.argv[2] ?? 'Dockerfile', 'utf8')
  .replace(/\\\r?\n\s*/g, ' ')
  .split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dockerfile-dryrun-'));
const stages = new Map();
let stage;
const say = (m) => process.stdout.write(`dockerfile-dryrun: ${m}\n`);

/** Maps an image path (/app/x, /data) into the stage's root. */
const inStage = (s, p) => (path.isAbsolute(p) ? path.join(s.root, p) : path.join(s.cwd, p));
const mapPaths = (s, cmd) => cmd.replace(/(^|[\s=])(\/(?:app|data)\b[^\s]*)/g, (_, pre, p) => pre + path.join(s.root, p));
const copy = (from, to) => fs.cpSync(from, to, { recursive: true, dereference: false });

for (const line of dockerfile) {
  const [instr, ...restParts] = line.split(/\s+/);
  const rest = restParts.join(' ');
  switch (instr.toUpperCase()) {
    case 'FROM': {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?/i.exec(rest);
      stage = { name: m[2] ?? `stage${stages.size}`, image: m[1], root: path.join(work, m[2] ?? `stage${stages.size}`), env: {}, cwd: '' };
      fs.mkdirSync(stage.root, { recursive: true });
      stage.cwd = stage.root;
      stages.set(stage.name, stage);
      say(`FROM ${m[1]} (as ${stage.name}) -> ${stage.root}`);
      break;
    }
    case 'WORKDIR':
      stage.cwd = inStage(stage, rest);
      fs.mkdirSync(stage.cwd, { recursive: true });
      break;
    case 'ENV':
      for (const [, k, v] of rest.matchAll(/(\w+)=(\S+)/g)) stage.env[k] = v;
      break;
    case 'COPY': {
      const args = rest.split(/\s+/);
      const fromFlag = args[0].startsWith('--from=') ? args.shift().slice(7) : undefined;
      const dest = args.pop();
      for (const src of args) {
        const base = fromFlag ? stages.get(fromFlag).root : context;
        const source = fromFlag ? path.join(base, src) : path.join(context, src);
        const target = dest.endsWith('/') || args.length > 1 ? path.join(inStage(stage, dest), path.basename(src)) : inStage(stage, dest);
        fs.mkdirSync(path.dirname(target), { recursive: true });
        copy(source, target);
      }
      say(`COPY ${rest}`);
      break;
    }
    case 'RUN': {
      if (/apt-get/.test(rest)) {
        say(`RUN skipped (system packages of the image; this machine has them): ${rest}`);
        break;
      }
      const cmd = mapPaths(stage, rest).replace(/chown\s+\S+\s+/g, 'true ');
      say(`RUN ${cmd}`);
      execSync(cmd, { cwd: stage.cwd, stdio: 'inherit', env: { ...process.env, ...stage.env }, shell: '/bin/sh' });
      break;
    }
    case 'HEALTHCHECK':
      stage.healthcheck = rest.replace(/^(--\S+\s+)*CMD\s+/, '');
      break;
    case 'CMD':
      stage.cmd = JSON.parse(rest);
      break;
    default:
      say(`${instr} noted, nothing to do without an engine: ${rest}`);
  }
}

// Start the final stage as the image would, check HEALTHCHECK, stop it with SIGTERM.
// A free-ish port of our own instead of the image's (another service may hold it on this machine).
const env = { ...process.env, ...stage.env, PORT: String(30000 + Math.floor(Math.random() * 20000)), HOST: '127.0.0.1' };
for (const [k, v] of Object.entries(env)) if (typeof v === 'string' && /^\/(app|data)\b/.test(v)) env[k] = path.join(stage.root, v);
delete env.API_TOKENS;
say(`CMD ${stage.cmd.join(' ')} (PORT=${env.PORT})`);
const proc = spawn(stage.cmd[0], stage.cmd.slice(1), { cwd: stage.cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
let exited = null;
// The exit code, or the signal that ended it (a code of null would read as "still running" below and wait forever).
proc.on('exit', (code, signal) => { exited = code ?? signal; });
proc.stdout.resume();
let healthy = false;
// eslint-disable-next-line no-unmodified-loop-condition -- `exited` is set by the process's exit event
for (let i = 0; i < 50 && !healthy && exited === null; i++) {
  await new Promise((r) => setTimeout(r, 200));
  try {
    execSync(stage.healthcheck, { env, stdio: 'ignore', shell: '/bin/sh' });
    healthy = true;
  } catch { /* not yet */ }
}
proc.kill('SIGTERM');
const code = await new Promise((r) => (exited !== null ? r(exited) : proc.on('exit', (c, signal) => r(c ?? signal))));
say(`removing ${work} (a few minutes on a busy machine)`);
fs.rmSync(work, { recursive: true, force: true });
if (!healthy) {
  say('FAILED: the HEALTHCHECK never passed');
  process.exit(1);
}
if (code !== 0) {
  say(`FAILED: after SIGTERM it exited with ${code}`);
  process.exit(1);
}
say('ok: built, started, healthy, stopped with 0');
