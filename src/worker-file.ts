import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A thread's file for Piscina (src/thread-entry.cts) and, in its workerData, the ES module it runs. */
export function compiledWorker(moduleUrl: string, name: string): { filename: string; entry: string } {
  const here = fileURLToPath(moduleUrl);
  const dist = here.endsWith('.js') ? path.resolve(path.dirname(here), '..') : path.resolve(path.dirname(here), '..', '..', 'dist');
  const module = path.join(dist, name);
  const filename = path.join(dist, 'thread-entry.cjs');
  for (const file of [module, filename]) if (!fs.existsSync(file)) throw new Error(`the worker ${file} is missing: run npm run build first`);
  return { filename, entry: pathToFileURL(module).href };
}

/** web-worker runs workerData.mod in any thread. */
export const webWorkerData = (name: string) => ({ mod: 'data:text/javascript,', name });

/** A Rust addon unloaded with a thread may SIGSEGV (rust-lang/rust #91979). */
let pinned = false;
export function pinNiceAddon(): void {
  if (pinned) return;
  pinned = true;
  const require = createRequire(import.meta.url);
  try {
    require('@napi-rs/nice');
  } catch {
  }
}
