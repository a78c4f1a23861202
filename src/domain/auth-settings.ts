/** The configured ways to authenticate: the configuration builds them, the HTTP layer checks requests against them. */

/** A configured static token: `token`, `token:*` (operator) or `token:projA+projB`. */
export interface StaticToken {
  token: string;
  projects: '*' | string[];
}

export interface JwtOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** The claim holding the caller's projects (an array of strings, or '*'). */
  projectsClaim: string;
}
