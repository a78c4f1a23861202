/**
 * docs/offchain-walkthrough.md, section 2 ("What you did, with curl"), as written: its shell block is taken from the
 * file and run with `sh` in the project's directory, as the reader runs it (`npm start`, then curl), on a free port
 * instead of 3000. It must answer 201 and 200 and leave nothing in the project: its files go to a temporary directory.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '..');

function curlBlock(): string {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/offchain-walkthrough.md'), 'utf8');
  const from = doc.indexOf('## 2. What you did, with curl');
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(from))?.[1];
  if (from === -1 || block === undefined) throw new Error('docs/offchain-walkthrough.md has no section 2 with an sh block');
  return block;
}

const freePort = () => new Promise<number>((resolve) => {
  const probe = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as net.AddressInfo;
    probe.close(() => resolve(port));
  });
});

it('the curl walkthrough answers 201 then 200, and writes its files under a temporary directory, none in the project', async () => {
  const port = await freePort();
  const script = curlBlock().replaceAll(':3000', `:${port}`);
  const tmp = tempDir('scs-offchain-walkthrough-');
  const leftovers = () => ['scenario.json', 'service.log'].filter((f) => fs.existsSync(path.join(ROOT, f)));
  expect(leftovers()).toEqual([]);
  const out = execFileSync('sh', ['-eu', '-c', `${script}\nwait $SERVICE || true\n`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TMPDIR: tmp, PORT: String(port), HOST: '127.0.0.1', MAX_EVENT_LOOP_DELAY_MS: '0' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(out.match(/^HTTP \d+$/gm)).toEqual(['HTTP 201', 'HTTP 200']);
  expect(out).toContain('"status":"pending"');
  expect(leftovers()).toEqual([]);
  // Everything it wrote is in the one directory mktemp made: the log (JSON lines), the scenario and the database.
  const [work] = fs.readdirSync(tmp);
  expect(fs.readdirSync(path.join(tmp, work!)).sort()).toEqual(['data', 'scenario.json', 'service.log']);
  expect(fs.readFileSync(path.join(tmp, work!, 'service.log'), 'utf8')).toContain('"msg":"ready: database SQLite');
});
