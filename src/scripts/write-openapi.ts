/** `npm run openapi`: openapi.yaml from the route schemas (a test checks it). */
import fs from 'node:fs';
import { renderOpenApi } from '../openapi.js';

const file = process.argv[2] ?? 'openapi.yaml';
fs.writeFileSync(file, await renderOpenApi());
process.stdout.write(`wrote ${file}\n`);
