/**
 * The held credential types as a tree the console's rule editor offers: each attribute with its declared datatype,
 * the operators that datatype allows and the kind of value they take. Built from the same type-scoped terms the
 * create-time check reads (credential-types.ts), so the editor offers exactly what a create accepts.
 */
import type { Operator } from '../schemas/scenario.js';
import type { CredentialTypes, Level } from './credential-types.js';

type ValueKind = 'string' | 'number' | 'boolean' | 'date' | 'any';

interface AttributeNode {
  name: string;
  /** The rule's `attribute`: dot-separated from the credential subject. */
  path: string;
  /** `object`: it has attributes of its own; `open`: its context is given by reference, so anything below is accepted. */
  datatype: string;
  valueKind: ValueKind;
  operators: Operator[];
  attributes?: AttributeNode[];
}

export interface HeldType {
  type: string;
  /** The type's context is given by reference only: any attribute is accepted unchecked. */
  open: boolean;
  attributes: AttributeNode[];
}

const COMMON: Operator[] = ['$eq', '$ne', '$exists'];
const ORDERED: Operator[] = ['$lt', '$lte', '$gt', '$gte', '$between', '$nonbetween'];
const LISTED: Operator[] = ['$in', '$nin'];

const NUMERIC = /^xsd:(?:integer|int|long|short|byte|decimal|double|float|(?:nonNegative|nonPositive|negative|positive)Integer|unsigned(?:Long|Int|Short|Byte))$/;

/** What the engine (engine/validate.ts, engine/operators.ts) accepts for a value of this datatype. */
function operatorsFor(datatype: string): { valueKind: ValueKind; operators: Operator[] } {
  const short = datatype.replace('http://www.w3.org/2001/XMLSchema#', 'xsd:');
  if (NUMERIC.test(short)) return { valueKind: 'number', operators: [...COMMON, ...ORDERED, ...LISTED] };
  if (short === 'xsd:boolean') return { valueKind: 'boolean', operators: COMMON };
  if (short === 'xsd:dateTime' || short === 'xsd:date') return { valueKind: 'date', operators: [...COMMON, ...ORDERED] };
  if (short === 'xsd:string') return { valueKind: 'string', operators: [...COMMON, ...LISTED] };
  return { valueKind: 'any', operators: [...COMMON, ...ORDERED, ...LISTED] };
}

const IDENTIFIERS: ReadonlySet<string> = new Set(['id', 'type']);

function nodesOf(level: Level, prefix: string): AttributeNode[] {
  const nodes: AttributeNode[] = [];
  for (const [name, child] of level.names) {
    if (IDENTIFIERS.has(name)) continue;
    const path = prefix === '' ? name : `${prefix}.${name}`;
    if (child === 'open') {
      nodes.push({ name, path, datatype: 'open', ...operatorsFor('open') });
    } else if (child === null) {
      nodes.push({ name, path, datatype: level.datatypes?.get(name) ?? 'unknown', ...operatorsFor(level.datatypes?.get(name) ?? '') });
    } else {
      nodes.push({ name, path, datatype: 'object', valueKind: 'any', operators: [], attributes: nodesOf(child, path) });
    }
  }
  return nodes.sort((a, b) => a.name.localeCompare(b.name));
}

export function heldTypes(known: CredentialTypes): HeldType[] {
  return [...known.types]
    .map(([type, level]) => (level === 'open' ? { type, open: true, attributes: [] } : { type, open: false, attributes: nodesOf(level, '') }))
    .sort((a, b) => a.type.localeCompare(b.type));
}
