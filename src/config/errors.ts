/** Apart from src/config.ts so that every module can throw it without importing the others' settings. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
