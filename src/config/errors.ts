/**
 * A bad environment variable, in one line naming it, so the process can print it and stop. Apart from
 * src/config.ts so that every module can throw it without importing the others' settings.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
