/** Each query read against its JSON-LD context the way the wallet and the verifier will. Run after validateZkpQueries. */
import { parseQueriesMetadata } from './sdk.js';
import type { FieldProblem } from '../engine/validate.js';
import { contextOf, toIden3Query, type ZkpQueryConfiguration } from './queries.js';
import type { JsonLdLoader } from '../jsonld/documents.js';
import { isRecord } from '../schemas/json.js';

export interface SchemaCheckOptions {
  documentLoader: JsonLdLoader;
  contexts?: Readonly<Record<string, string>>;
  basePointer?: string;
}

function definesType(document: unknown, type: string): boolean {
  const ctx = isRecord(document) ? document['@context'] : undefined;
  const parts = Array.isArray(ctx) ? ctx : [ctx];
  return parts.some((p) => isRecord(p) && Object.hasOwn(p, type));
}

export async function checkZkpQuerySchemas(
  queryConfigurations: readonly ZkpQueryConfiguration[],
  options: SchemaCheckOptions,
): Promise<FieldProblem[]> {
  const base = options.basePointer ?? '/queryConfigurations';
  const problems: FieldProblem[] = [];
  for (const [i, { query }] of queryConfigurations.entries()) {
    const at = `${base}/${i}/query`;
    const context = contextOf(query, options.contexts);
    if (context === undefined) continue; // validateZkpQueries reports it
    let document: unknown;
    try {
      document = (await options.documentLoader(context)).document;
    } catch {
      continue; // validateZkpQueries reports it (documents option)
    }
    if (!definesType(document, query.type)) {
      problems.push({ pointer: `${at}/type`, message: `the JSON-LD context ${context} does not define the credential type ${JSON.stringify(query.type)}` });
      continue;
    }
    const { credentialSubject } = toIden3Query(query, context, ['*']);
    if (!credentialSubject) continue;
    try {
      await parseQueriesMetadata(query.type, JSON.stringify(document), credentialSubject, { documentLoader: options.documentLoader });
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      let pointer = `${at}/attribute`;
      let message = `the attribute ${JSON.stringify(query.attribute)} is not defined for ${query.type} in ${context}`;
      if (/operator .* is not supported for datatype/.test(msg)) {
        pointer = `${at}/operator`;
        message = `${query.operator} cannot be used on ${JSON.stringify(query.attribute)}: ${msg}`;
      } else if (!/field does not exist|not defined|not found|invalid path|no such/i.test(msg)) {
        pointer = `${at}/value`;
        message = `the value does not fit the datatype of ${JSON.stringify(query.attribute)} in ${context}: ${msg.slice(0, 200)}`;
      }
      problems.push({ pointer, message });
    }
  }
  return problems;
}
