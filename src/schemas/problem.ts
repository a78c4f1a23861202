import { Type, type Static } from '@sinclair/typebox';

/** A body may fail in many more places (16,000 wrong items fit in 32 KB): listing them all would cost seconds. */
export const MAX_FIELD_ERRORS = 20;

/** RFC 9457 problem details. */
export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the problem type.', examples: ['urn:problem:validation'] }),
    title: Type.String({ description: 'The name of the status (e.g. Bad Request), the same for every problem of that status.' }),
    status: Type.Integer({ minimum: 400, maximum: 599, description: 'The HTTP status.' }),
    detail: Type.Optional(Type.String({ description: 'What went wrong with this request, in words to show or log.' })),
    instance: Type.Optional(Type.String({ description: 'The path of the request.' })),
    code: Type.Optional(Type.String({
      description: 'Stable machine-readable error code: branch on it, not on title or detail. Each response says which codes it carries.',
      examples: ['SCS_VALIDATION'],
    })),
    errors: Type.Optional(Type.Array(
      Type.Object(
        {
          field: Type.String({ description: 'Dotted path of the failing field, e.g. body.credentials.0.issuer' }),
          pointer: Type.String({ description: 'JSON pointer of the failing field inside its part (body, params, querystring, headers).' }),
          message: Type.String({
            description: 'What the field must be, to show next to it.',
            examples: ['must be one of ChallengeQuery, OnChainZKP, OffChainZKP'],
          }),
        },
        { additionalProperties: false },
      ),
      {
        maxItems: MAX_FIELD_ERRORS,
        description: `For validation problems: one entry per failing field, in the order found, at most ${MAX_FIELD_ERRORS}.`,
      },
    )),
    errorsTruncated: Type.Optional(Type.Boolean({
      description: `Present (true) when the request fails in more places than \`errors\` lists (at most ${MAX_FIELD_ERRORS}): ` +
        'fix those and send it again to see the next ones. The service stops looking past a bound, so it does not say how many more.',
    })),
  },
  { $id: 'Problem', additionalProperties: false, description: 'An error, as RFC 9457 problem details (application/problem+json).' },
);
export type Problem = Static<typeof Problem>;

/** One field of a validation problem (`errors[i]`): the field, its JSON pointer, what is wrong. */
export type FieldError = NonNullable<Problem['errors']>[number];
