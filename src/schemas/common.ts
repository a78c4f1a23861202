import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const ID = {
  minLength: 1,
  maxLength: 128,
  // Not dots only: URLs normalise "." and ".." away, so such a scenario could never be read again.
  pattern: '^[A-Za-z0-9_.:-]*[A-Za-z0-9_:-][A-Za-z0-9_.:-]*$',
};
const ID_TEXT = '1 to 128 characters of A-Z a-z 0-9 _ . : -, not dots only';

export const IdString = Type.String({ ...ID, description: ID_TEXT, examples: ['adult-kyc'] });

export const IdOf = (what: string, example: string) => Type.String({ ...ID, description: `${what} ${ID_TEXT}.`, examples: [example] });

export const RefString = Type.String({ minLength: 1, maxLength: 512 });

/** One `enum`, not a union of constants: a wrong value is one error that names the values. */
export const StringEnum = <const T extends readonly string[]>(values: T, options?: SchemaOptions) =>
  Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T10:00:00.000Z'] });

export function refOf<T extends TSchema>(schema: T, options?: SchemaOptions) {
  if (schema.$id === undefined) throw new TypeError('refOf: the schema has no $id');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id, options));
}

/** A token holding several projects names the one it means. */
export const ProjectQuery = Type.Object({
  projectId: Type.Optional(Type.String({
    maxLength: 128,
    description:
      'The project of the scenario, for a token that holds several projects where more than one has a scenario with ' +
      'this id (409 SCS_SCENARIO_AMBIGUOUS otherwise). Empty: the scenario without a project (operator tokens). A ' +
      'project the token does not hold finds nothing (404).',
  })),
}, { additionalProperties: false });
