import { createRemoteJWKSet, customFetch, errors as joseErrors } from 'jose';

/** The JWKS (AUTH_JWKS_URL) cannot be had now: the caller answers 503, since nothing is known about the token. */
export class JwksUnavailable extends Error {}

/** The first pause after a failed JWKS fetch; each failure in a row doubles it, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

/**
 * The keys of a remote JWKS (jose's createRemoteJWKSet: cached, refetched for an unknown key id at most every 30 s),
 * and what jose leaves to its caller: a JWKS answering other than 200 with JSON, or not at all, is an outage
 * (JwksUnavailable), not a bad token; after a failed fetch none is tried again for a pause that doubles with each
 * failure in a row (1 s to 30 s), so tokens with unknown key ids cannot make the service hammer a failing JWKS.
 * Keys fetched before the outage keep verifying the tokens they signed meanwhile.
 */
export function remoteKeys(url: string, now: () => number = Date.now) {
  let failures = 0;
  let retryAt = 0;
  const failed = (why: string): JwksUnavailable => {
    failures++;
    retryAt = now() + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (failures - 1));
    return new JwksUnavailable(`the JWKS ${why}`);
  };
  const fetchJwks = async (input: string, init: RequestInit): Promise<Response> => {
    if (now() < retryAt) throw new JwksUnavailable('the JWKS failed lately; not asked again yet');
    let res: Response;
    let text: string;
    try {
      res = await fetch(input, init);
      text = await res.text();
    } catch (err) {
      throw failed(`did not answer (${err instanceof Error ? err.name : typeof err})`);
    }
    if (res.status !== 200) throw failed(`answered ${res.status}`);
    try {
      JSON.parse(text);
    } catch {
      throw failed('answered something that is not JSON');
    }
    failures = 0;
    retryAt = 0;
    return new Response(text, { status: 200, headers: res.headers });
  };
  const keys = createRemoteJWKSet(new URL(url), { timeoutDuration: 5000, cooldownDuration: 30_000, [customFetch]: fetchJwks });
  return keys;
}

/** Whether a verification error says the keys could not be had (503), rather than that the token is bad (401). */
export function keysUnavailable(err: unknown): boolean {
  return err instanceof JwksUnavailable || err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid ||
    !(err instanceof joseErrors.JOSEError);
}
