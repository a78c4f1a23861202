import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdOf, StringEnum } from '../schemas/common.js';
import { CSV_COLUMNS, EXPORT_ROWS_MAX, exportsOneProject, type EvidenceExporter, type EvidenceKey } from '../services/export.js';
import { AddressQuery, FromQuery, ToQuery, VerdictQuery, invalidQuery as invalid, periodFilterOf } from './execution-filters.js';
import { AUTHENTICATED, problemResponses } from './responses.js';
import { accessOf } from './tenancy.js';

const STORED_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Opaque: the key of the last record of the previous request. */
const encodeCursor = (key: EvidenceKey) => Buffer.from(`e${key.createdAt}|${key.seq}`).toString('base64url');

function decodeCursor(cursor: string): EvidenceKey {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const [createdAt = '', seq = ''] = text.slice(1).split('|');
  if (!text.startsWith('e') || !STORED_INSTANT.test(createdAt) || !/^\d{1,15}$/.test(seq)) throw invalid('cursor', 'is not a cursor this service issued');
  return { createdAt, seq: Number(seq) };
}

const TYPES = { ndjson: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8; header=present' } as const;

const ExportQuery = Type.Object({
  from: FromQuery(''),
  to: ToQuery(''),
  scenarioId: Type.Optional(IdOf('Only the executions of this scenario id.', 'adult-kyc')),
  verdict: VerdictQuery,
  address: AddressQuery,
  format: Type.Optional(StringEnum(['ndjson', 'csv'], { default: 'ndjson', description: 'NDJSON (one JSON object a line) or CSV (RFC 4180, with a header row).' })),
  projectId: Type.Optional(Type.String({
    maxLength: 128,
    description: 'Only this project\'s executions (empty: those without a project, operator tokens). A project the token does not hold exports nothing. ' +
      'Required of a token holding several projects.',
  })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: EXPORT_ROWS_MAX, default: EXPORT_ROWS_MAX, description: 'Records in this response at most.' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'From the `Link: rel="next"` of the previous response.' })),
}, { additionalProperties: false });

const RECORD_FIELDS = 'executionId, createdAt, projectId, scenarioId, scenarioRevision, scenarioDigest (SHA-256 of the scenario revision ' +
  'that ran, as attestations sign it; null in records older than it), address, state, verdict, rules (each rule\'s id and status), ' +
  'credentials (the presented credentials\' SHA-256 digests)';

/** GET /compliance/executions/export: a static segment, so /compliance/executions/:executionId never takes it. */
export const exportRoutes: FastifyPluginAsyncTypebox<{ exporter: EvidenceExporter }> = async (app, { exporter }) => {
  app.get('/compliance/executions/export', {
    config: { scope: 'scenarios:read' },
    schema: {
      operationId: 'exportExecutions',
      summary: 'Export a period\'s executions as evidence',
      description: `The executions of the token's project (a token holding several names one with projectId) created in [from, to), oldest first (by creation time, then by the order they were recorded), streamed as they are read. Each record: ${RECORD_FIELDS}. ` +
        'Never a credential\'s content or id, nor a reason\'s text (it may name a credential). Attestations are signed on request and not kept: a JWS ' +
        'attestation\'s `jti` is the executionId. ' +
        `At most \`limit\` (${EXPORT_ROWS_MAX}) records a response: when more follow, a \`Link\` header with rel="next" gives the URL of the next part ` +
        '(the same query and a `cursor`); without it no part follows. An NDJSON body ends with the line `{"end":true,"records":N}`: a body without it was ' +
        'cut short by a failure after the status was sent, and the part is to be read again. A CSV body has no such line (it would break CSV parsers): ' +
        'a cut one shows only as an aborted transfer (the connection closed before the end of the chunked body). Export a period that has ended: an execution still being recorded when a part is read may be missed. ' +
        'CSV cells starting with = + - @ (after blanks or not), a tab or a carriage return get a leading apostrophe, so spreadsheets do not run them; ' +
        'a cell holding `;` is quoted; `rules` holds id=status pairs and `credentials` digests, space-separated.',
      tags: ['executions'], security: [{ bearerAuth: ['scenarios:read'] }],
      querystring: ExportQuery,
      produces: ['application/x-ndjson', 'text/csv'],
      response: {
        200: {
          description: 'The records (the NDJSON end line, or the CSV header, alone when none match).',
          headers: {
            Link: { type: 'string', description: 'When more records follow: `<URL>; rel="next"`, the URL of the next part.' },
            'Content-Disposition': { type: 'string', description: 'attachment, with a file name.' },
          },
          content: {
            'application/x-ndjson': {
              schema: { type: 'string', description: `One JSON object a line: ${RECORD_FIELDS}; then \`{"end":true,"records":N}\`, N the records before it.` },
            },
            'text/csv': { schema: { type: 'string', description: `A header row (${CSV_COLUMNS.join(',')}), then a row a record, CRLF line ends.` } },
          },
        },
        ...problemResponses(AUTHENTICATED, {
          400: 'A query parameter is not valid (code SCS_VALIDATION): `errors` names it (from, to, verdict, address, format, limit, cursor...); ' +
          'projectId when the token holds several projects and names none.',
        }),
      },
    },
  }, async (request, reply) => {
    const query = request.query;
    const { from, to, verdict, address } = periodFilterOf(query);
    const format = query.format ?? 'ndjson';
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const range = {
      from, to, ...(query.scenarioId !== undefined && { scenarioId: query.scenarioId }), ...(verdict && { verdict }), ...(address && { address }), ...(after && { after }),
    };
    const access = accessOf(request);
    if (!exportsOneProject(access)) throw invalid('projectId', 'is required: the token holds several projects, and an export reads one');
    const evidence = await exporter.export(access, range, query.limit ?? EXPORT_ROWS_MAX, format);
    if (evidence.next) {
      const next = new URLSearchParams(Object.entries({ ...query, cursor: encodeCursor(evidence.next) }).map(([k, v]) => [k, String(v)]));
      reply.header('link', `</compliance/executions/export?${next.toString()}>; rel="next"`);
    }
    reply.header('cache-control', 'no-store');
    reply.header('content-disposition', `attachment; filename="executions-${from.slice(0, 10)}.${format}"`);
    reply.type(TYPES[format]);
    return reply.send(Readable.from(evidence.text, { objectMode: false }));
  });
};
