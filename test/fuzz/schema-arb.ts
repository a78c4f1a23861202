/**
 * A small JSON Schema -> fast-check generator, for the subset of JSON Schema the route schemas use (TypeBox output as
 * @fastify/swagger publishes it): $ref, const, enum, anyOf/oneOf, type (one or a list), string (minLength, maxLength,
 * pattern, format date-time/uuid), integer/number (minimum, maximum), array (items, minItems, maxItems), object
 * (properties, required, additionalProperties).
 *
 * `valid(schema)` makes values the schema accepts (sizes capped so that requests stay small, boundaries included);
 * `mutant(schema)` makes values that are probably refused: exactly one place in an otherwise valid value is broken
 * (a wrong type, a bound crossed by one, a pattern broken, a required key dropped, an unknown key added, ...).
 * Nothing here decides validity: the fuzz test asks an independent Ajv whether a value is valid.
 */
import fc from 'fast-check';

export type Schema = { [key: string]: unknown };

export interface SchemaArbOptions {
  /** The schema a `$ref` names. */
  resolve: (ref: string) => Schema;
  /** Longest array generated where the schema allows more (default 3). */
  maxItems?: number;
  /** Longest string generated where the schema allows more, boundaries aside (default 24). */
  maxString?: number;
}

const WRONG_TYPES: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, '', 'x', '0', 'null', [], [null], {}, { a: 1 }];
/** Characters that break the patterns of the schemas (ids are [A-Za-z0-9_.:-]; attribute paths forbid empty segments). */
const PATTERN_BREAKERS = [' ', '/', '\\', '?', '#', '%', 'é', '\u0000', '\n', '..', '.', '*', '\u{1F600}', '\ud800'];
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

const typesOf = (s: Schema): string[] =>
  Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];

/** Own-property object from entries (a "__proto__" key stays a key). */
const objectOf = (entries: [string, unknown][]) => Object.fromEntries(entries);

const plainStrings = new Map<string, fc.Arbitrary<string>>();

/**
 * Strings of ASCII, of any grapheme, or of any code point (lone surrogates included). Shared by length range: making
 * an fc.string of a full-Unicode unit builds its shrinker's tables (tens of milliseconds); drawing from it is cheap.
 */
function plainString(minLength: number, maxLength: number): fc.Arbitrary<string> {
  const key = `${minLength}:${maxLength}`;
  let arb = plainStrings.get(key);
  if (!arb) {
    const ascii = fc.string({ unit: 'grapheme-ascii', minLength, maxLength });
    arb = fc.oneof(
      { arbitrary: ascii, weight: 12 },
      { arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength }), weight: 5 },
      { arbitrary: fc.string({ unit: 'binary', minLength, maxLength }), weight: 3 },
      // Lone surrogates and NUL: valid JSON strings (escaped) that UTF-8 cannot carry as they are.
      {
        arbitrary: fc.tuple(ascii, fc.constantFrom('\ud800', '\udfff', '\udbff\udbff', '\u0000', '\ufeff'), fc.nat())
          .map(([str, odd, at]) => { const i = at % (str.length + 1); return str.slice(0, i) + odd + str.slice(i); })
          .filter((x) => [...x].length >= minLength && [...x].length <= maxLength),
        weight: 1,
      },
    );
    plainStrings.set(key, arb);
  }
  return arb;
}

export class SchemaArbitraries {
  private readonly resolve: (ref: string) => Schema;
  private readonly maxItems: number;
  private readonly maxString: number;
  private readonly validCache = new Map<Schema, fc.Arbitrary<unknown>>();
  private readonly mutantCache = new Map<Schema, fc.Arbitrary<unknown>>();

  constructor(options: SchemaArbOptions) {
    this.resolve = options.resolve;
    this.maxItems = options.maxItems ?? 3;
    this.maxString = options.maxString ?? 24;
  }

  private deref(schema: Schema): Schema {
    let s = schema;
    for (let i = 0; typeof s.$ref === 'string' && i < 32; i++) s = this.resolve(s.$ref);
    return s;
  }

  /** Values the schema accepts. */
  valid(schema: Schema): fc.Arbitrary<unknown> {
    return this.cached(this.validCache, this.deref(schema), (s) => this.buildValid(s));
  }

  /** Values with (at least) one broken place, probably refused. */
  mutant(schema: Schema): fc.Arbitrary<unknown> {
    return this.cached(this.mutantCache, this.deref(schema), (s) => this.buildMutant(s));
  }

  /**
   * The arbitrary of a schema, built on first use. Lazy so that recursive schemas terminate; fc.constant(...).chain
   * keeps the cache entry usable at once.
   */
  private cached(cache: Map<Schema, fc.Arbitrary<unknown>>, s: Schema, build: (s: Schema) => fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
    let arb = cache.get(s);
    if (!arb) {
      let built: fc.Arbitrary<unknown> | undefined;
      arb = fc.constant(null).chain(() => (built ??= build(s)));
      cache.set(s, arb);
    }
    return arb;
  }

  private buildValid(s: Schema): fc.Arbitrary<unknown> {
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (Array.isArray(branches)) return fc.oneof(...branches.map((b) => this.valid(b)));
    const types = typesOf(s);
    if (types.length > 1) return fc.oneof(...types.map((t) => this.valid({ ...s, type: t })));
    switch (types[0]) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return this.integer(s);
      case 'number':
        return fc.oneof(this.integer(s), fc.double({
          noNaN: true, noDefaultInfinity: true,
          ...(typeof s.minimum === 'number' && { min: s.minimum }),
          ...(typeof s.maximum === 'number' && { max: s.maximum }),
        }).map((n) => (Object.is(n, -0) ? 0 : n)));
      case 'string':
        return this.string(s);
      case 'array':
        return this.array(s, this.valid((s.items as Schema | undefined) ?? {}));
      case 'object':
        return this.object(s);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private integer(s: Schema): fc.Arbitrary<number> {
    const min = typeof s.minimum === 'number' ? Math.ceil(s.minimum) : -MAX_SAFE;
    const max = typeof s.maximum === 'number' ? Math.floor(s.maximum) : MAX_SAFE;
    const inner = fc.bigInt({ min: BigInt(Math.max(min, -1_000_000)), max: BigInt(Math.min(max, Math.max(min, -1_000_000) + 2_000_000)) }).map(Number);
    return fc.oneof({ arbitrary: inner, weight: 4 }, { arbitrary: fc.constantFrom(min, max), weight: 1 });
  }

  private string(s: Schema): fc.Arbitrary<string> {
    const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
    const maxLength = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
    const fits = (x: string) => {
      const n = [...x].length;
      return n >= minLength && n <= maxLength;
    };
    const examples = Array.isArray(s.examples) ? (s.examples as unknown[]).filter((e): e is string => typeof e === 'string') : [];
    const withExamples = (arb: fc.Arbitrary<string>) =>
      examples.length ? fc.oneof({ arbitrary: arb, weight: 5 }, { arbitrary: fc.constantFrom(...examples), weight: 1 }) : arb;

    if (s.format === 'date-time') {
      return fc.tuple(
        fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom('Z', '+00:00', '+02:00', '-05:30', 'noms'),
      ).map(([d, zone]) => {
        const iso = d.toISOString();
        if (zone === 'Z') return iso;
        if (zone === 'noms') return iso.replace(/\.\d{3}Z$/, 'Z');
        return iso.replace(/Z$/, zone);
      });
    }
    if (s.format === 'uuid') return fc.uuid();
    if (typeof s.pattern === 'string') {
      const re = new RegExp(s.pattern as string, 'u');
      const long = maxLength !== Infinity && maxLength <= 512
        ? [fc.stringMatching(re, { size: 'medium' }).map((x) => x.repeat(Math.ceil(maxLength / Math.max(1, x.length))).slice(0, maxLength))
            .filter((x) => re.test(x) && fits(x))]
        : [];
      return withExamples(fc.oneof(
        { arbitrary: fc.stringMatching(re, { size: 'small' }).filter(fits), weight: 20 },
        ...long.map((arbitrary) => ({ arbitrary, weight: 1 })),
      ));
    }
    const cap = Math.max(minLength, Math.min(maxLength, this.maxString));
    const arbs: fc.WeightedArbitrary<string>[] = [{ arbitrary: plainString(minLength, cap), weight: 20 }];
    if (maxLength !== Infinity && maxLength > cap && maxLength <= 4096) {
      arbs.push({ arbitrary: fc.constantFrom('a', 'é', '\u{1F600}').map((c) => c.repeat(maxLength)), weight: 1 });
    }
    return withExamples(fc.oneof(...arbs));
  }

  private array(s: Schema, item: fc.Arbitrary<unknown>): fc.Arbitrary<unknown[]> {
    const minItems = typeof s.minItems === 'number' ? s.minItems : 0;
    const maxItems = typeof s.maxItems === 'number' ? s.maxItems : Infinity;
    return fc.array(item, { minLength: minItems, maxLength: Math.max(minItems, Math.min(maxItems, this.maxItems)) });
  }

  private object(s: Schema): fc.Arbitrary<Record<string, unknown>> {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    const required = new Set((s.required ?? []) as string[]);
    const keys = Object.keys(props);
    const fields = keys.map((k) =>
      required.has(k)
        ? this.valid(props[k]!).map((v) => [[k, v]] as [string, unknown][])
        : fc.option(this.valid(props[k]!), { nil: undefined, freq: 2 }).map((v) => (v === undefined ? [] : [[k, v]]) as [string, unknown][]),
    );
    const extra = s.additionalProperties === false
      ? fc.constant([] as [string, unknown][])
      : fc.array(
        fc.tuple(fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in props)),
          typeof s.additionalProperties === 'object' ? this.valid(s.additionalProperties as Schema) : fc.jsonValue({ maxDepth: 2 })),
        { maxLength: 2 },
      );
    return fc.tuple(fc.tuple(...fields), extra).map(([parts, more]) => objectOf([...parts.flat(), ...more]));
  }

  private buildMutant(s: Schema): fc.Arbitrary<unknown> {
    const arbs: fc.WeightedArbitrary<unknown>[] = [{ arbitrary: fc.constantFrom(...WRONG_TYPES), weight: 1 }];
    const add = (arbitrary: fc.Arbitrary<unknown>, weight = 2) => arbs.push({ arbitrary, weight });

    if ('const' in s || Array.isArray(s.enum)) {
      const values = ('const' in s ? [s.const] : (s.enum as unknown[])).filter((v): v is string => typeof v === 'string');
      if (values.length) {
        add(fc.constantFrom(...values).chain((v) => fc.constantFrom(v.toLowerCase(), v.toUpperCase(), `${v} `, v.slice(1), `${v}x`)));
      }
      return fc.oneof(...arbs);
    }
    const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (Array.isArray(branches)) {
      for (const b of branches) add(this.mutant(b), 3);
      return fc.oneof(...arbs);
    }
    const types = typesOf(s);
    if (types.length > 1) {
      for (const t of types) add(this.mutant({ ...s, type: t }), 3);
      return fc.oneof(...arbs);
    }
    switch (types[0]) {
      case 'integer':
      case 'number': {
        if (typeof s.minimum === 'number') add(fc.constantFrom(s.minimum - 1, s.minimum - 0.5, -1e21));
        if (typeof s.maximum === 'number') add(fc.constantFrom(s.maximum + 1, s.maximum + 0.5, 1e21));
        if (types[0] === 'integer') add(fc.constantFrom(0.5, 1.0000001, -2.5, 2 ** 53 + 2));
        add(this.valid(s).map((n) => String(n)));
        break;
      }
      case 'string': {
        const maxLength = typeof s.maxLength === 'number' ? s.maxLength : undefined;
        const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
        if (maxLength !== undefined) add(fc.constantFrom('a', '0', '\u{1F600}').map((c) => c.repeat(maxLength + 1)), 3);
        if (minLength > 0) add(fc.constant(''), 2);
        if (typeof s.pattern === 'string') {
          add(fc.tuple(this.valid(s), fc.constantFrom(...PATTERN_BREAKERS), fc.nat()).map(([v, bad, at]) => {
            const str = String(v);
            const i = at % (str.length + 1);
            return str.slice(0, i) + bad + str.slice(i);
          }), 4);
        }
        if (s.format === 'date-time') {
          add(fc.constantFrom('2020-01-01T00:00:00', '2020-13-01T00:00:00Z', '2020-02-30T00:00:00Z', 'yesterday', '2020-01-01',
            '2020-01-01 00:00:00Z', '2020-01-01T25:00:00Z', '+275760-09-13T00:00:00.000Z', '0000-00-00T00:00:00Z'), 3);
        }
        if (s.format === 'uuid') add(fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-00000000000g', '{00000000-0000-0000-0000-000000000000}'));
        add(fc.double({ noNaN: true }), 1);
        break;
      }
      case 'array': {
        const item = ((s.items as Schema | undefined) ?? {}) as Schema;
        if (typeof s.maxItems === 'number') {
          const n = s.maxItems + 1;
          add(this.valid(item).chain((v) => fc.constant(Array.from({ length: n }, () => v))), 1);
        }
        if (typeof s.minItems === 'number' && s.minItems > 0) add(fc.constant([]), 2);
        add(fc.tuple(this.array({ ...s, minItems: Math.max(1, (s.minItems as number | undefined) ?? 0) }, this.valid(item)), this.mutant(item), fc.nat())
          .map(([arr, bad, at]) => {
            const copy = arr.slice();
            copy[at % copy.length] = bad;
            return copy;
          }), 4);
        add(this.valid(item), 1); // a single item instead of an array of them
        break;
      }
      case 'object': {
        const props = (s.properties ?? {}) as Record<string, Schema>;
        const keys = Object.keys(props);
        const required = ((s.required ?? []) as string[]).filter((k) => k in props);
        if (required.length) {
          add(fc.tuple(this.valid(s), fc.constantFrom(...required)).map(([o, k]) => {
            const copy = { ...(o as Record<string, unknown>) };
            delete copy[k];
            return copy;
          }), 3);
        }
        if (s.additionalProperties === false) {
          add(fc.tuple(this.valid(s), fc.constantFrom('extra', 'Name', 'id ', '__proto__', 'constructor', 'input', 'toString'), fc.jsonValue({ maxDepth: 1 }))
            .map(([o, k, v]) => objectOf([...Object.entries(o as Record<string, unknown>), [k, v]])), 2);
        }
        if (keys.length) {
          add(fc.constantFrom(...keys).chain((k) =>
            fc.tuple(this.valid(s), this.mutant(props[k]!)).map(([o, bad]) =>
              objectOf([...Object.entries(o as Record<string, unknown>).filter(([key]) => key !== k), [k, bad]]))), 6);
        }
        add(this.valid(s).map((o) => [o]), 1);
        break;
      }
      default:
        break;
    }
    return fc.oneof(...arbs);
  }
}
