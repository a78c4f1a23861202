/**
 * Files other people published (iden3's test vectors, JSON-LD contexts, real credentials), read where the team keeps
 * them, `../shared/fixtures/` beside the repository, or where `npm run fixtures` writes them from upstream,
 * `.fixtures/` (git-ignored); never copied into the repository. Where a file is in neither, the tests that need it are
 * skipped and the run ends with one line counting them (test/missing-fixtures.reporter.ts); CI has the data.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// SCS_SHARED_FIXTURES points elsewhere, alone (a missing folder shows what the tests do without them).
const FOLDERS = process.env.SCS_SHARED_FIXTURES !== undefined
  ? [path.resolve(REPO_ROOT, process.env.SCS_SHARED_FIXTURES)]
  : [path.resolve(REPO_ROOT, '../shared/fixtures'), path.join(REPO_ROOT, '.fixtures')];

/** Starts the line a file logs when data it needs is absent: the reporter counts those files' skipped tests. */
export const MISSING_FIXTURES = 'skipped for missing public test data:';

/** The absolute path of `<relative>` in the first folder holding it (in the first folder when none does). */
export const sharedFixture = (relative: string): string =>
  FOLDERS.map((folder) => path.join(folder, relative)).find((file) => existsSync(file)) ?? path.join(FOLDERS[0]!, relative);

/**
 * Whether every named shared fixture is there; when one is not, logs it (the reporter sums these into one line).
 * Use as `describe.skipIf(!haveSharedFixtures('iden3/…'))`.
 */
export function haveSharedFixtures(...relatives: string[]): boolean {
  const missing = relatives.filter((r) => !existsSync(sharedFixture(r)));
  if (missing.length > 0) console.warn(`${MISSING_FIXTURES} ${missing.join(', ')} (in none of ${FOLDERS.join(', ')})`);
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
