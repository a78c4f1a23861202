/** A configured static token: `token`, `token:*` (operator) or `token:projA+projB`. */
export interface StaticToken {
  token: string;
  projects: '*' | string[];
}

export interface JwtOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
  projectsClaim: string;
}
