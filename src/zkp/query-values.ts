export type Add = (pointer: string, message: string) => void;

/** Operators only the V3 circuits (and linkedMultiQuery) prove. */
export const V3_ONLY_OPERATORS: ReadonlySet<string> = new Set(['$lte', '$gte', '$between', '$nonbetween', '$exists']);
const MAX_VALUES = 64;
/** ISO 8601 date or date-time (the shapes xsd:dateTime fields take); checked loosely, js-sdk hashes it later. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?)?$/;

const isFiniteNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

function kindOf(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  return typeof x === 'object' ? 'an object' : `a ${typeof x}`;
}

function orderable(op: string, value: unknown): string | undefined {
  if (isFiniteNumber(value)) {
    return Number.isSafeInteger(value) && value >= 0
      ? undefined
      : `value for ${op} must be a non-negative integer or an ISO 8601 date: the circuits compare field elements, ` +
        `so negative and fractional numbers cannot be compared; got ${value}`;
  }
  return typeof value === 'string' && ISO_DATE.test(value) ? undefined : `value for ${op} must be a non-negative integer or an ISO 8601 date; got ${kindOf(value)}`;
}

export function checkValue(query: Record<string, unknown>, op: string, add: Add): void {
  const value = query.value;
  if (op === '$noop') {
    if (value !== undefined) add('/value', '$noop takes no value: it proves that a valid credential of the type exists');
    return;
  }
  const attribute = query.attribute;
  if (typeof attribute !== 'string' || attribute.length === 0 || attribute.split('.').some((s) => s.length === 0)) {
    add('/attribute', `attribute is required for ${op}: a dot path inside credentialSubject (e.g. personalData.age)`);
  } else if (attribute.split('.').some((s) => s.startsWith('$') || s.startsWith('@'))) {
    add('/attribute', 'attribute segments must not start with $ or @');
  }
  switch (op) {
    case '$sd':
      if (value !== undefined) add('/value', '$sd takes no value: the wallet discloses the attribute\'s value');
      return;
    case '$in':
    case '$nin':
      if (!Array.isArray(value) || value.length === 0) {
        add('/value', `value for ${op} must be a non-empty array of strings or numbers; got ${Array.isArray(value) ? 'an empty array' : kindOf(value)}`);
        return;
      }
      if (value.length > MAX_VALUES) {
        add('/value', `value for ${op} may hold at most ${MAX_VALUES} values (the limit of the iden3 circuits); got ${value.length}`);
      }
      value.forEach((x, j) => {
        if (typeof x !== 'string' && !isFiniteNumber(x)) add(`/value/${j}`, `each value for ${op} must be a string or a number; got ${kindOf(x)}`);
      });
      return;
    case '$lt':
    case '$gt':
    case '$lte':
    case '$gte': {
      const why = orderable(op, value);
      if (why) add('/value', why);
      return;
    }
    case '$between':
    case '$nonbetween': {
      if (!Array.isArray(value) || value.length !== 2) {
        add('/value', `value for ${op} must be [min, max]: two non-negative integers or two ISO 8601 dates; got ${kindOf(value)}`);
        return;
      }
      value.forEach((x, j) => {
        const why = orderable(op, x);
        if (why) add(`/value/${j}`, why);
      });
      return;
    }
    case '$exists':
      if (typeof value !== 'boolean') add('/value', `value for $exists must be a boolean (true: present, false: absent); got ${kindOf(value)}`);
      return;
    default: // $eq, $ne
      if (typeof value !== 'string' && typeof value !== 'boolean' && !isFiniteNumber(value)) {
        add('/value', `value for ${op} must be one string, number or boolean (the circuits compare one value; use $in for a list); got ${kindOf(value)}`);
      }
  }
}
