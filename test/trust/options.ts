import { loadConfig } from '../../src/config.js';
import type { TrustOptions } from '../../src/trust/index.js';

/** The service's trust options as its configuration defaults them, checks on the calling thread, with `over`. */
export function trustOptions(over: Partial<TrustOptions>): TrustOptions {
  return { ...loadConfig({ VERIFY_THREADS: '0' }).trust, ...over };
}
