/**
 * The Dockerfile's base image and health check, read as text (scripts/dockerfile-dryrun.mjs runs its steps): the
 * image runs a Node major the README says the suite is tested on, pinned by exact version and digest, and its
 * HEALTHCHECK probes liveness, so that a database outage (not ready) does not mark the container unhealthy.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';

const dockerfile = fs.readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');

it('every stage is on a Node major the README says the suite is tested on, pinned by exact version and digest', () => {
  const tested = /\(tested on ([\d and,]+)\)/.exec(readme)![1]!.split(/\D+/).filter(Boolean);
  const images = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!);
  expect(images.length).toBeGreaterThan(0);
  for (const image of images) {
    const m = /^node:(\d+)\.\d+\.\d+-bookworm-slim@sha256:[0-9a-f]{64}$/.exec(image);
    expect(m, image).not.toBeNull();
    expect(tested, image).toContain(m![1]);
  }
});

it('HEALTHCHECK probes /health/live, not /health/ready', () => {
  const check = /^HEALTHCHECK[^\n]*\\\n([^\n]*)/m.exec(dockerfile)?.[1] ?? /^HEALTHCHECK.*$/m.exec(dockerfile)![0];
  expect(check).toContain('/health/live');
  expect(check).not.toContain('/health/ready');
});

it('the image carries every folder the service reads at start: dist, and console/ (on by default)', () => {
  const copies = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
  expect(copies).toContain('console');
  expect(dockerfile).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
});
