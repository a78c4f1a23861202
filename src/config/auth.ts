import { Type, type Static } from '@sinclair/typebox';
import type { Config } from './types.js';
import { ConfigError } from './errors.js';
import { httpUrl, text } from './variables.js';

const requiredWithJwks = 'required with `AUTH_JWKS_URL`';

export const authEnv = Type.Object({
  API_TOKENS: Type.Optional(text({
    expect: 'comma-separated `token`, `token:*` or `token:projA+projB`, each token 16+ printable characters',
    docDefault: 'unset: one random operator token per run, printed once',
    description: 'Static bearer tokens: `token` or `token:*` is an operator\'s (every project), `token:projA+projB` is for ' +
      'those projects only. Static tokens carry every scope.',
  })),
  AUTH_JWKS_URL: Type.Optional(text({
    expect: 'an http(s) URL',
    docDefault: 'unset (no JWTs)',
    description: 'Accept JWT bearer tokens signed by a key of this JWKS; a JWT must carry `exp`. A token listed in `API_TOKENS` is ' +
      'that static token even when it has a JWT\'s shape (two dots). While the JWKS does not answer 200 with JSON, JWTs it ' +
      'would have to be fetched for answer 503 `SCS_AUTH_UNAVAILABLE`, and it is asked again only after a pause doubling ' +
      'from 1 s to 30 s with each failure in a row.',
  })),
  AUTH_JWT_ISSUER: Type.Optional(text({ expect: 'text', docDefault: requiredWithJwks, description: 'The `iss` a JWT must carry.' })),
  AUTH_JWT_AUDIENCE: Type.Optional(text({ expect: 'text', docDefault: requiredWithJwks, description: 'The `aud` a JWT must carry.' })),
  AUTH_JWT_PROJECTS_CLAIM: text({
    expect: 'a claim name (printable characters, no spaces)',
    pattern: '^[\\x21-\\x7e]+$',
    default: 'projects',
    description: 'The claim holding a JWT\'s projects: an array of project ids, or `"*"` for an operator.',
  }),
  SCENARIO_APPROVAL_PROJECTS: Type.Optional(text({
    expect: 'comma-separated project ids, or `*` (every scenario, project-less ones too)',
    docDefault: 'unset: a PATCH goes live at once',
    description: 'Four eyes: in these projects a PATCH is a proposed revision (202), live only once a token with the scope ' +
      '`scenarios:approve` whose subject is not the author approves it. A PATCH moving a scenario in or out of one is too. ' +
      'See docs/governance.md, "Approval".',
  })),
});

export type AuthEnv = Static<typeof authEnv>;

/** A token without projects, or with `*`, is an operator token (configurations from before tenancy keep working). */
function tokens(raw: string | undefined): Config['apiTokens'] {
  if (raw === undefined) return [];
  return raw.split(',').map((t) => t.trim()).filter((t) => t.length > 0).map((entry) => {
    const at = entry.indexOf(':');
    const token = at < 0 ? entry : entry.slice(0, at);
    const scope = at < 0 ? '*' : entry.slice(at + 1);
    if (token.length < 16 || !/^[\x21-\x7e]+$/.test(token)) {
      throw new ConfigError('API_TOKENS must be a comma-separated list of tokens of at least 16 printable characters each (optionally token:projA+projB or token:*)');
    }
    if (scope === '*' || scope === '') return { token, projects: '*' as const };
    const projects = scope.split('+');
    if (projects.some((p) => !/^[A-Za-z0-9_.-]{1,128}$/.test(p))) {
      throw new ConfigError('API_TOKENS: projects after ":" must be ids of [A-Za-z0-9_.-] joined by "+", or "*"');
    }
    return { token, projects };
  });
}

function jwt(env: AuthEnv): Config['jwt'] {
  const jwksUrl = env.AUTH_JWKS_URL;
  if (jwksUrl === undefined) return undefined;
  httpUrl('AUTH_JWKS_URL', jwksUrl); // the check only: the URL is kept as given, trailing slash included
  const issuer = env.AUTH_JWT_ISSUER;
  const audience = env.AUTH_JWT_AUDIENCE;
  if (!issuer) throw new ConfigError('AUTH_JWT_ISSUER is required when AUTH_JWKS_URL is set');
  if (!audience) throw new ConfigError('AUTH_JWT_AUDIENCE is required when AUTH_JWKS_URL is set');
  return { jwksUrl, issuer, audience, projectsClaim: env.AUTH_JWT_PROJECTS_CLAIM };
}

function approvalProjects(raw: string | undefined): Config['approvalProjects'] {
  const projects = (raw ?? '').split(',').map((p) => p.trim()).filter((p) => p.length > 0);
  if (projects.includes('*')) return '*';
  if (projects.some((p) => !/^[A-Za-z0-9_.-]{1,128}$/.test(p))) {
    throw new ConfigError('SCENARIO_APPROVAL_PROJECTS must be project ids of [A-Za-z0-9_.-] separated by commas, or *');
  }
  return projects;
}

export function authSettings(env: AuthEnv): Pick<Config, 'apiTokens' | 'jwt' | 'approvalProjects'> {
  return { apiTokens: tokens(env.API_TOKENS), jwt: jwt(env), approvalProjects: approvalProjects(env.SCENARIO_APPROVAL_PROJECTS) };
}
