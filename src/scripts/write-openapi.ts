/** Writes openapi.yaml from the route schemas: `npm run openapi`. A test fails when the committed file drifts. */
import fs from 'node:fs';
import { renderOpenApi } from '../openapi.js';

const file = process.argv[2] ?? 'openapi.yaml';
fs.writeFileSync(file, await renderOpenApi());
process.stdout.write(`wrote ${file}\n`);
