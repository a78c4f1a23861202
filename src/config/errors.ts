/**
 * The one error of configuration: a bad environment variable. Its message is one line that names the variable, so
 * the process can print it and stop. Every module's settings reader throws it (src/config/variables.ts, the converters
 * next to each module's variables); it lives apart from src/config.ts so that those modules can throw it without
 * importing every other module's settings.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
