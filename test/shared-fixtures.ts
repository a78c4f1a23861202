/**
 * Files other people published (iden3's test vectors, JSON-LD contexts, real credentials), read where the team keeps
 * them, `../shared/fixtures/` beside the repository, and never copied into it. Where that folder is absent, the tests
 * that need them are skipped and say so; CI has it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// SCS_SHARED_FIXTURES points elsewhere (a missing folder shows what the tests do without them).
const SHARED_FIXTURES = path.resolve(REPO_ROOT, process.env.SCS_SHARED_FIXTURES ?? '../shared/fixtures');

/** The absolute path of `../shared/fixtures/<relative>`. */
export const sharedFixture = (relative: string): string => path.join(SHARED_FIXTURES, relative);

/**
 * Whether every named shared fixture is there; when one is not, warns once, naming it, so that a skipped test says why.
 * Use as `describe.skipIf(!haveSharedFixtures('iden3/…'))`.
 */
export function haveSharedFixtures(...relatives: string[]): boolean {
  const missing = relatives.filter((r) => !existsSync(sharedFixture(r)));
  if (missing.length > 0) {
    console.warn(`skipped: these tests need ${missing.map((m) => `../shared/fixtures/${m}`).join(', ')} ` +
      `(public test data read from beside the repository, ${SHARED_FIXTURES}), which is absent here`);
  }
  return missing.length === 0;
}

/** iden3's KYC JSON-LD contexts and JSON schemas (kyc-v3, kyc-v4, …), in the format of JSONLD_DOCUMENTS_FILE. */
const IDEN3_DOCUMENTS_FILE = sharedFixture('iden3/jsonld-and-json-schemas.json');
export const haveIden3Documents = (): boolean => haveSharedFixtures('iden3/jsonld-and-json-schemas.json');

/** The documents of IDEN3_DOCUMENTS_FILE, URL -> document; none where it is absent (see haveIden3Documents). */
export const iden3Documents = (): Record<string, unknown> => existsSync(IDEN3_DOCUMENTS_FILE)
  ? JSON.parse(readFileSync(IDEN3_DOCUMENTS_FILE, 'utf8')) as Record<string, unknown>
  : {};

/** The variables that hand iden3's contexts to the service, when the shared fixtures are there (else none). */
export const iden3DocumentsEnv = (): Record<string, string> => existsSync(IDEN3_DOCUMENTS_FILE)
  ? { JSONLD_DOCUMENTS_FILE: IDEN3_DOCUMENTS_FILE }
  : {};
