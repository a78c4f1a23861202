import { buildApp } from './app.js';
import { loadConfig } from './config.js';

export async function renderOpenApi(): Promise<string> {
  const app = await buildApp(loadConfig({ DATABASE_URL: 'sqlite://:memory:', API_TOKENS: 'openapi-render-token' }), { logger: false });
  try {
    await app.ready();
    return app.swagger({ yaml: true });
  } finally {
    await app.close();
  }
}
