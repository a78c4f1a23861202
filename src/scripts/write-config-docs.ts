/** `npm run docs:config`: the configuration table of docs/configuration.md (test/config.docs.unit.test.ts checks it). */
import fs from 'node:fs';
import { CONFIG_SECTIONS } from '../config.js';
import { configTable, withConfigTable } from '../config/docs.js';

const file = process.argv[2] ?? 'docs/configuration.md';
fs.writeFileSync(file, withConfigTable(fs.readFileSync(file, 'utf8'), configTable(CONFIG_SECTIONS)));
process.stdout.write(`wrote the configuration table of ${file}\n`);
