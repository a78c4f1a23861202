/**
 * Ends the run with one line counting the tests skipped because public test data is absent (instead of one warning
 * per file): the files that logged MISSING_FIXTURES (test/shared-fixtures.ts), and the tests skipped in them.
 */
import type { UserConsoleLog } from 'vitest';
import type { Reporter, TestModule } from 'vitest/node';
import { MISSING_FIXTURES } from './shared-fixtures.js';

/** For vitest.config's onConsoleLog: the per-file lines are not printed (this reporter sums them). */
export const printLog = (log: string): boolean => !log.startsWith(MISSING_FIXTURES);

export default class MissingFixturesReporter implements Reporter {
  private readonly files = new Set<string>();
  private readonly data = new Set<string>();

  onUserConsoleLog(log: UserConsoleLog): void {
    if (!log.content.startsWith(MISSING_FIXTURES) || log.taskId === undefined) return;
    this.files.add(log.taskId);
    for (const name of log.content.slice(MISSING_FIXTURES.length).split(' (in none')[0]!.split(',')) this.data.add(`${name.trim().split('/')[0]!}/`);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const hit = modules.filter((m) => this.files.has(m.id));
    const skipped = hit.reduce((n, m) => n + [...m.children.allTests('skipped')].length, 0);
    if (hit.length === 0) return;
    console.log(`\n${skipped} tests skipped in ${hit.length} files for missing public test data (${[...this.data].sort().join(', ')}): ` +
      'run `npm run fixtures` to fetch it (README, "Tests").');
  }
}
