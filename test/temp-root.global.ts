/**
 * Vitest global setup: one temporary directory for the whole run, removed when the run ends. Every test's
 * directories (tempDir() in helpers.ts: SQLite files, the servers' DATA_DIR) are made inside it, so a run leaves
 * nothing in the machine's temporary directory, whether a test cleans up after itself or not.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TEMP_ROOT_VARIABLE = 'SCS_TEST_TMPDIR';

export default function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'scs-test-'));
  // The test files' processes inherit the variable (they start after the global setup).
  process.env[TEMP_ROOT_VARIABLE] = root;
  return () => fs.rmSync(root, { recursive: true, force: true });
}
