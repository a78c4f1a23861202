/** buildApp, when a step after composeAdapters fails: what the adapters opened is closed, as no app.close() will come. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { TOKEN, tempDir } from './helpers.js';

describe('buildApp failing after the adapters are open', () => {
  it('closes the store it was handed, once, and rejects with the error', async () => {
    const dataDir = tempDir();
    const config = loadConfig({ DATA_DIR: dataDir, API_TOKENS: TOKEN, VERIFY_THREADS: '0', CREDENTIAL_VERIFICATION: 'off' });
    const store = openSqliteStore({ file: path.join(dataDir, 'handed.db'), synchronous: 'NORMAL' });
    let closes = 0;
    const close = store.close.bind(store);
    store.close = async () => {
      closes++;
      await close();
    };
    // loadConfig refuses such a URL; handed in directly, the authenticator throws after composeAdapters opened the store.
    const broken = { ...config, jwt: { jwksUrl: 'not a url', issuer: 'https://issuer.example', audience: 'scs', projectsClaim: 'projects' } };
    await expect(buildApp(broken, { logger: false, store })).rejects.toThrow(/Invalid URL/);
    expect(closes).toBe(1);
  });
});
