/**
 * README's "Try it" walkthrough, as written: its shell block is taken from README.md (so the test cannot drift from
 * it), run twice with `sh` against the real server process (DEMO_ISSUER=1), and both runs must give the same answers
 * (ids, timestamps, ETags, digests and incarnations, new on every run, masked).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { killAll, start, type Server } from './server-process.js';

const TOKEN = 'walkthrough-token-0123456789abcdef';

/** The walkthrough's commands: the first ```sh block of "## Try it" that sets BASE. */
function walkthrough(): string {
  const readme = fs.readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Try it'), readme.indexOf('\n## ', readme.indexOf('## Try it') + 1));
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('BASE='));
  if (!block) throw new Error('README "Try it" has no sh block that sets BASE');
  return block;
}

/** The answers of a run, with what is new on every run masked. */
const mask = (out: string) => out
  .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
  .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
  .replace(/"\d+\.\d+"/g, '"<etag>"')
  .replace(/[0-9a-f]{64}/g, '<digest>')
  .replace(/incarnation=\d+/g, 'incarnation=<seq>');

let server: Server | undefined;

describe('the README walkthrough', () => {
  beforeAll(async () => {
    server = await start({ DATA_DIR: tempDir('scs-walkthrough-'), API_TOKENS: TOKEN, DEMO_ISSUER: '1', LOG_LEVEL: 'info' });
  }, 60_000);
  afterAll(() => killAll());

  it('gives the same answers when run twice in a row, in POSIX sh', () => {
    const script = walkthrough();
    // No bash-only syntax and no GNU-only flags.
    expect(script).not.toMatch(/\$\{[A-Z_]+\[@\]\}|\bsed -n 's\/.*\/Ip'|\[\[/);
    const run = () => execFileSync('sh', ['-eu', '-c', script], {
      env: { PATH: process.env.PATH ?? '', BASE: server!.url, TOKEN, TMPDIR: tempDir('scs-walkthrough-run-') },
      encoding: 'utf8',
      timeout: 120_000,
    });
    const first = run();
    const second = run();
    expect(mask(second)).toBe(mask(first));

    const answers = first.trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(answers).toHaveLength(7);
    const [created, valid, patched, notValid, audit, expired, revoked] = answers as any[];
    expect(created).toMatchObject({ id: 'adult-kyc', revision: 1 });
    expect(valid.map((r: any) => r.result.status)).toEqual(['valid', 'valid']);
    expect(patched.input.queryConfigurations[1].query.value).toBe(40);
    expect(notValid.map((r: any) => r.result.status)).toEqual(['valid', 'not-valid']);
    expect(notValid[1].result.result.reasons.join(' ')).toMatch(/personalData\.age is not \$gte 40/);
    expect(audit.executionId).toBe(notValid[0].executionId);
    expect(expired.map((r: any) => r.result.status)).toEqual(['not-valid', 'not-valid']);
    expect(JSON.stringify(expired)).toMatch(/expired/i);
    expect(revoked.map((r: any) => r.result.status)).toEqual(['not-valid', 'not-valid']);
    for (const r of revoked) expect(r.result.result.reasons.join(' ')).toMatch(/revoked by its issuer \(SparseMerkleTreeProof\)/);
  }, 240_000);
});
