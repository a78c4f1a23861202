import { Type, type Static } from '@sinclair/typebox';

/** RFC 9457 problem details. */
export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the problem type.', examples: ['urn:problem:validation'] }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    code: Type.Optional(Type.String({ description: 'Stable machine-readable error code.', examples: ['SCS_VALIDATION'] })),
    errors: Type.Optional(Type.Array(
      Type.Object(
        {
          field: Type.String({ description: 'Dotted path of the failing field, e.g. body.credentials.0.issuer' }),
          pointer: Type.String({ description: 'JSON pointer of the failing field inside its part (body, params, querystring, headers).' }),
          message: Type.String(),
        },
        { additionalProperties: false },
      ),
      { description: 'For validation problems: one entry per failing field.' },
    )),
  },
  { $id: 'Problem', additionalProperties: false },
);
export type Problem = Static<typeof Problem>;

/** One field of a validation problem (`errors[i]`): the field, its JSON pointer, what is wrong. */
export type FieldError = NonNullable<Problem['errors']>[number];
