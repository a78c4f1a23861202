/**
 * A per-scenario list can only narrow the service-wide one: the issuer must be in both. DIDs are compared exactly
 * (iden3 DIDs are case-sensitive base58).
 */
import type { TrustVerdict } from '../engine/types.js';
import { notValid, OK } from './structure.js';

export type IssuerList = readonly string[] | '*';

function allows(list: IssuerList, issuer: string): boolean {
  return list === '*' || list.includes('*') || list.includes(issuer);
}

export function checkIssuer(issuer: string, service: IssuerList, scenario: IssuerList | undefined): TrustVerdict {
  const byService = allows(service, issuer);
  const byScenario = scenario === undefined || allows(scenario, issuer);
  if (byService && byScenario) return OK;
  if (!byService && service !== '*' && service.length === 0) {
    return notValid(`its issuer ${issuer} is not trusted: no issuer is trusted (TRUSTED_ISSUERS is empty)`);
  }
  if (!byService && !byScenario) return notValid(`its issuer ${issuer} is trusted neither by the service (TRUSTED_ISSUERS) nor by this scenario`);
  if (!byService) return notValid(`its issuer ${issuer} is not trusted (not in TRUSTED_ISSUERS)`);
  return notValid(`its issuer ${issuer} is not trusted by this scenario (not in its trustedIssuers)`);
}
