/** A JWKS served on 127.0.0.1 and JWTs signed by its key, for tests that need tokens with claims of their own. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

export const JWT_ISSUER = 'https://issuer.test/';
const JWT_AUDIENCE = 'compliance-api';

export interface LocalJwks {
  /** AUTH_JWKS_URL, AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE for makeApp. */
  env: Record<string, string>;
  /** Valid for 5 minutes, issued to `subject`. */
  sign(claims: Record<string, unknown>, subject: string): Promise<string>;
  close(): void;
}

export async function localJwks(): Promise<LocalJwks> {
  const key = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const server = http.createServer((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  return {
    env: { AUTH_JWKS_URL: url, AUTH_JWT_ISSUER: JWT_ISSUER, AUTH_JWT_AUDIENCE: JWT_AUDIENCE },
    sign: (claims, subject) => new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(JWT_ISSUER).setAudience(JWT_AUDIENCE).setSubject(subject)
      .setIssuedAt().setExpirationTime('5m').sign(key.privateKey),
    close: () => server.close(),
  };
}
