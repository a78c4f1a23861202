/**
 * openapi.yaml is usable by a generated client: openapi-typescript turns it into types (test/client/openapi.d.ts,
 * not committed), the small openapi-fetch client of test/client/typed-client.ts must compile against them with the
 * project's strict options (it reads ETag, Location, x-request-id, Retry-After and the problem fields without a cast),
 * and then it runs against the service listening on 127.0.0.1.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { TOKEN, makeApp } from './helpers.js';

const DIR = path.resolve('test/client');
const CLIENT = path.join(DIR, 'typed-client.ts');

/** The generated types of openapi.yaml, written where the client imports them from. */
async function generateTypes(): Promise<void> {
  const ast = await openapiTS(pathToFileURL(path.resolve('openapi.yaml')));
  fs.writeFileSync(path.join(DIR, 'openapi.d.ts'), astToString(ast));
}

/** tsc's diagnostics for the client, with the project's compiler options (strict, noUncheckedIndexedAccess). */
function compile(file: string): string[] {
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, noEmit: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('a client generated from openapi.yaml', () => {
  it('compiles, and reads ETag, Location, Retry-After and the problem fields from the running service', async () => {
    await generateTypes();
    expect(compile(CLIENT)).toEqual([]);

    const app = await makeApp({ RATE_LIMIT_MAX: '10' });
    try {
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      // A computed path: typecheck does not follow it to the generated types, which a fresh clone lacks.
      const client = await import(CLIENT) as { run: (base: string, token: string, id: string) => Promise<Record<string, Record<string, unknown>>> };
      const seen = await client.run(base, TOKEN, 'typed-client');

      expect(seen.created).toEqual({ id: 'typed-client', etag: expect.stringMatching(/^"\d+\.1"$/), location: '/compliance/scenarios/typed-client', requestId: expect.any(String) });
      expect(seen.read).toEqual({ etag: seen.created!.etag, revision: 1 });
      expect(seen.stale).toMatchObject({ status: 412, code: 'SCS_PRECONDITION_FAILED', title: 'Precondition Failed' });
      expect(seen.stale!.detail).toContain(`send If-Match: ${String(seen.read!.etag)}`);
      expect(seen.patched).toEqual({ etag: expect.stringMatching(/^"\d+\.2"$/), rules: ['q-kyc', 'q-age'] });
      expect(seen.invalid).toEqual({ status: 400, code: 'SCS_VALIDATION', fields: ['body.input.queryConfigurations.0.query.value'] });
      expect(seen.limited).toEqual({ status: 429, retryAfter: expect.stringMatching(/^\d+$/), code: 'SCS_RATE_LIMITED' });
    } finally {
      await app.close();
    }
  }, 120_000);

  it('does not compile a read of a header the document does not declare for that response', async () => {
    await generateTypes();
    const probe = path.join(DIR, 'undeclared-header.probe.ts');
    fs.writeFileSync(probe, [
      "import type { paths } from './openapi.js';",
      "type H = paths['/compliance/scenarios']['get']['responses'][200] extends { headers: infer X } ? X : never;",
      'type Declared = keyof { [K in keyof H as string extends K ? never : K]: H[K] };',
      "export const etag: Declared = 'ETag';",
    ].join('\n'));
    try {
      expect(compile(probe).join('\n')).toMatch(/"ETag"/);
    } finally {
      fs.rmSync(probe, { force: true });
    }
  }, 60_000);
});
