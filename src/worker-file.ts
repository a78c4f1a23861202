import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** In dist/ when it runs from src/ (vitest). */
export function compiledWorker(moduleUrl: string, name: string): string {
  const here = fileURLToPath(moduleUrl);
  if (here.endsWith('.js')) return path.join(path.dirname(here), path.basename(name));
  const built = path.resolve(path.dirname(here), '..', '..', 'dist', name);
  if (!fs.existsSync(built)) throw new Error(`the worker ${built} is missing: run npm run build first`);
  return built;
}

/**
 * ffjavascript's `web-worker` package takes any thread for one of its own and runs workerData.mod (with none, a
 * TypeError in every thread): this gives it an empty script.
 */
export const webWorkerData = (name: string) => ({ mod: 'data:text/javascript,', name });

/**
 * Loads piscina's @napi-rs/nice on the main thread too, so that it is never unloaded: a Rust addon loaded only in
 * worker threads can be unloaded while their thread-local destructors still run its code, a SIGSEGV after a clean
 * stop (rust-lang/rust #91979, napi-rs #3443).
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
