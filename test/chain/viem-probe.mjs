/**
 * Module resolve hook (`module.register`) for test/chain/lazy-load.test.ts: appends the URL of every module resolved
 * under node_modules/viem/ to the file given at registration. viem is ESM, so require.cache never shows it loaded;
 * every module Node loads is resolved here first, on the hooks thread, before the import that asked for it goes on.
 */
import { appendFileSync } from 'node:fs';

let out;

export function initialize(data) {
  out = data.out;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (resolved.url.includes('/node_modules/viem/')) appendFileSync(out, `${resolved.url}\n`);
  return resolved;
}
