/** The compiled worker and the workerData the piscina pools need to start their threads. */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Beside the calling module in dist/, or in dist/ when it runs from src/ (vitest). */
export function compiledWorker(moduleUrl: string, name: string): string {
  const here = fileURLToPath(moduleUrl);
  if (here.endsWith('.js')) return path.join(path.dirname(here), path.basename(name));
  const built = path.resolve(path.dirname(here), '..', '..', 'dist', name);
  if (!fs.existsSync(built)) throw new Error(`the worker ${built} is missing: run npm run build first`);
  return built;
}

/**
 * @0xpolygonid/js-sdk and @iden3/js-jwz load ffjavascript, which loads the `web-worker` package, which decides when it
 * is loaded off the main thread that the thread is one of its own web workers and runs the script named by
 * workerData.mod (with none, it prints a TypeError in every thread). These threads start no web worker; this gives it
 * an empty script.
 */
export const webWorkerData = (name: string) => ({ mod: 'data:text/javascript,', name });

/**
 * Loads @napi-rs/nice, the native addon piscina loads inside each thread for `niceIncrement`, on the main thread too,
 * once, so that it is never unloaded. A Rust addon loaded only in worker threads can be unloaded while those threads'
 * thread-local destructors still run its code: the process then dies by SIGSEGV after a clean stop (rust-lang/rust
 * #91979; lightningcss #892, napi-rs #3443, where the workaround is this). Seen here as a graceful stop that, once in
 * a few hundred, ended by a signal instead of exit 0. Without the addon (another platform), piscina runs without
 * nice, and so does this.
 */
let pinned = false;
export function pinNiceAddon(): void {
  if (pinned) return;
  pinned = true;
  const require = createRequire(import.meta.url);
  try {
    require('@napi-rs/nice');
  } catch {
    // not installed for this platform: no thread loads it either
  }
}
