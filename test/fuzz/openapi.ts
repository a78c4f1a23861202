/**
 * The live OpenAPI document (`app.swagger()`) as the fuzzer reads it: the operations, their parameters, bodies and
 * documented responses, and Ajv validators compiled from it. The fuzzer generates requests from these schemas and
 * checks responses against them, so a route added tomorrow is fuzzed and checked without touching the test.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Schema } from './schema-arb.js';

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  /** OpenAPI template, e.g. /compliance/scenarios/{scenarioId} */
  path: string;
  operationId?: string;
  parameters: Parameter[];
  /** Content type -> body schema. */
  body?: Record<string, Schema>;
  bodyRequired: boolean;
  /** Status -> content type -> schema (no content: a response without a body). */
  responses: Record<string, Record<string, Schema> | undefined>;
  secured: boolean;
  matcher: RegExp;
  paramCount: number;
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { schemas: Record<string, Schema> };
}

/** Rewrites document-relative $refs (#/components/...) to absolute ones, for schemas compiled outside the document. */
function absolute(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(absolute);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [
    k,
    k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? DOC_ID + v : absolute(v),
  ]));
}

const ptr = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const DOC_ID = 'urn:fuzz:openapi';

export class Api {
  readonly operations: Operation[];
  /** Body and response schemas as written (no coercion); */
  private readonly strict: Ajv;
  /** Parameters: text, so coerced as the app does for params, query strings and headers. */
  private readonly text: Ajv;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDoc) {
    const make = (coerceTypes: boolean) => {
      const ajv = new Ajv({ strict: false, allErrors: false, coerceTypes, useDefaults: true, validateFormats: true });
      (addFormats as unknown as (a: Ajv) => void)(ajv);
      // Only what schemas may reference: $refs read #/components/schemas/X relative to this document.
      ajv.addSchema({ $id: DOC_ID, components: structuredClone(doc.components), paths: structuredClone(doc.paths) });
      return ajv;
    };
    this.strict = make(false);
    this.text = make(true);
    this.operations = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, raw] of Object.entries(item)) {
        if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue;
        const op = raw as {
          operationId?: string;
          parameters?: Parameter[];
          requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
          responses?: Record<string, { content?: Record<string, { schema: Schema }> }>;
          security?: unknown[];
        };
        const names: string[] = [];
        const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, (_m, n: string) => {
          names.push(n);
          return '([^/]*)';
        });
        this.operations.push({
          method: method.toUpperCase(),
          path,
          operationId: op.operationId,
          parameters: (op.parameters ?? []).map((p) => ({ ...p, required: Boolean(p.required) })),
          body: op.requestBody
            ? Object.fromEntries(Object.entries(op.requestBody.content).map(([ct, c]) => [ct, c.schema]))
            : undefined,
          bodyRequired: Boolean(op.requestBody?.required),
          responses: Object.fromEntries(Object.entries(op.responses ?? {}).map(([status, r]) => [
            status,
            r.content ? Object.fromEntries(Object.entries(r.content).map(([ct, c]) => [ct, c.schema])) : undefined,
          ])),
          secured: Array.isArray(op.security) && op.security.length > 0,
          matcher: new RegExp(`^${source}$`),
          paramCount: names.length,
        });
      }
    }
    // Static segments win over parameters, as in the router.
    this.operations.sort((a, b) => a.paramCount - b.paramCount);
  }

  op(method: string, path: string): Operation {
    const found = this.operations.find((o) => o.method === method && o.path === path);
    if (!found) throw new Error(`no operation ${method} ${path} in the OpenAPI document`);
    return found;
  }

  /** The operation a request reaches, by method and raw path (HEAD reaches GET). */
  match(method: string, rawPath: string): { op: Operation; params: string[] } | undefined {
    const m = method === 'HEAD' ? 'GET' : method;
    for (const op of this.operations) {
      if (op.method !== m) continue;
      const hit = op.matcher.exec(rawPath);
      if (hit) return { op, params: hit.slice(1) };
    }
    return undefined;
  }

  private compiled(key: string, ajv: Ajv, schema: Schema): ValidateFunction {
    let v = this.cache.get(key);
    if (!v) {
      v = ajv.compile(schema);
      this.cache.set(key, v);
    }
    return v;
  }

  /** A validator for a schema found at a JSON pointer path inside the document. */
  private at(pointer: string[], coerce = false): ValidateFunction {
    const ref = `${DOC_ID}#/${pointer.map(ptr).join('/')}`;
    return this.compiled(`${coerce}:${ref}`, coerce ? this.text : this.strict, { $ref: ref });
  }

  bodyValidator(op: Operation, contentType: string): ValidateFunction {
    return this.at(['paths', op.path, op.method.toLowerCase(), 'requestBody', 'content', contentType, 'schema']);
  }

  responseValidator(op: Operation, status: string, contentType: string): ValidateFunction {
    return this.at(['paths', op.path, op.method.toLowerCase(), 'responses', status, 'content', contentType, 'schema']);
  }

  componentValidator(name: string): ValidateFunction {
    return this.at(['components', 'schemas', name]);
  }

  /** The schema components.schemas[name] as written; throws when the document has no schema of that name. */
  component(name: string): Schema {
    const schema = this.doc.components.schemas[name];
    if (schema === undefined) throw new Error(`no schema ${name} in the OpenAPI document's components`);
    return schema;
  }

  /**
   * Validates one part (path, query, header) as the app does: the route's params and querystring schemas are closed
   * objects (additionalProperties: false); headers are open.
   */
  partValidator(op: Operation, part: 'path' | 'query' | 'header'): ValidateFunction {
    const params = op.parameters.filter((p) => p.in === part);
    const schema: Schema = {
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [part === 'header' ? p.name.toLowerCase() : p.name, p.schema])),
      required: params.filter((p) => p.required && !(part === 'query' && 'default' in p.schema)).map((p) => (part === 'header' ? p.name.toLowerCase() : p.name)),
      additionalProperties: part === 'header' || (part === 'query' && params.length === 0),
    };
    return this.compiled(`part:${op.method}:${op.path}:${part}`, this.text, absolute(schema) as Schema);
  }
}
