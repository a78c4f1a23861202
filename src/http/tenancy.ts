import type { FastifyRequest } from 'fastify';
import { storableText } from '../domain/storable-text.js';
import { accessFor, type Access } from '../services/access.js';
import { ValidationFailed } from './errors.js';

const built = new WeakMap<FastifyRequest, Access>();

/** Only a route whose querystring declares `projectId` is narrowed by it; elsewhere the parameter means nothing. */
function declaresProject(request: FastifyRequest): boolean {
  const schema: unknown = request.routeOptions.schema?.querystring;
  if (typeof schema !== 'object' || schema === null || !('properties' in schema)) return false;
  const properties: unknown = schema.properties;
  return typeof properties === 'object' && properties !== null && 'projectId' in properties;
}

function namedProject(request: FastifyRequest): string | undefined {
  if (!declaresProject(request)) return undefined;
  const query: unknown = request.query;
  if (typeof query !== 'object' || query === null || !('projectId' in query) || typeof query.projectId !== 'string') return undefined;
  // It reaches the database: the rule of every stored text.
  if (!storableText(query.projectId)) {
    throw new ValidationFailed([{ field: 'querystring.projectId', pointer: '/projectId', message: 'must not contain U+0000 or an unpaired UTF-16 surrogate' }]);
  }
  return query.projectId;
}

/** From the token and `?projectId=`. */
export function accessOf(request: FastifyRequest): Access {
  let access = built.get(request);
  if (access === undefined) {
    access = accessFor(request.principal?.projects, namedProject(request));
    built.set(request, access);
  }
  return access;
}
