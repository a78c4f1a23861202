import { randomBytes } from 'node:crypto';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

let generatedToken: string | undefined;
if (config.apiTokens.length === 0 && !config.jwt) {
  generatedToken = randomBytes(24).toString('base64url');
  config.apiTokens = [{ token: generatedToken, projects: '*' }];
}

const app = await buildApp(config);
if (generatedToken) {
  app.log.warn('API_TOKENS is unset: made a random token for this run only; set API_TOKENS to keep one');
  // Printed once, to the terminal, never to the log stream.
  process.stderr.write(`\nAPI token for this run (API_TOKENS unset): ${generatedToken}\n\n`);
}

closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
});

try {
  await app.listen({ port: config.port, host: config.host });
} catch (err) {
  app.log.error({ err }, 'could not start');
  process.exit(1);
}
