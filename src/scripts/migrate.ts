/** `npm run migrate`: migrates the configured database, then exits (the server also does at start). */
import { ConfigError, loadConfig } from '../config.js';
import { openStore } from '../store/index.js';

try {
  const config = loadConfig();
  const store = await openStore(config.database);
  await store.close();
  process.stdout.write(`migrated the ${config.database.kind} database\n`);
} catch (err) {
  process.stderr.write(`migrate: ${err instanceof ConfigError ? err.message : String(err)}\n`);
  process.exit(1);
}
