import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function compiledWorker(moduleUrl: string, name: string): string {
  const here = fileURLToPath(moduleUrl);
  if (here.endsWith('.js')) return path.join(path.dirname(here), path.basename(name));
  const built = path.resolve(path.dirname(here), '..', '..', 'dist', name);
  if (!fs.existsSync(built)) throw new Error(`the worker ${built} is missing: run npm run build first`);
  return built;
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
