import { describe, expect, it } from 'vitest';
import { ADDRESS, auth, demoCredential, makeApp, scenario } from './helpers.js';

describe('/metrics', () => {
  it('counts requests per route pattern and status, verdicts per scenario type, store latency, with no personal data', async () => {
    const app = await makeApp();
    try {
      await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'secret-scenario-id', input: scenario() } });
      const holder = await demoCredential({ personalData: { firstName: 'Zebulon', age: 12 } });
      for (let i = 0; i < 3; i++) {
        await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [holder], scenarioId: 'secret-scenario-id' } });
      }
      await app.inject({ method: 'GET', url: '/compliance/scenarios/nope', headers: auth });
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const text = res.body;
      expect(text).toMatch(/http_requests_total\{method="POST",route="\/compliance\/scenarios\/execute",status="200"\} 3/);
      expect(text).toMatch(/http_requests_total\{method="GET",route="\/compliance\/scenarios\/:scenarioId",status="404"\} 1/);
      expect(text).toMatch(/http_request_duration_seconds_bucket\{le="[^"]+",method="POST",route="\/compliance\/scenarios\/execute",status="200"\}/);
      // The holder is 12: the age rule fails, the review rule passes.
      expect(text).toMatch(/compliance_rule_verdicts_total\{scenario_type="ChallengeQuery",status="valid"\} 3/);
      expect(text).toMatch(/compliance_rule_verdicts_total\{scenario_type="ChallengeQuery",status="not-valid"\} 3/);
      expect(text).toMatch(/store_operation_duration_seconds_count\{operation="recordExecution",outcome="ok"\} 3/);
      for (const secret of ['secret-scenario-id', 'Zebulon', ADDRESS, 'nope', holder.id]) expect(text).not.toContain(secret);
    } finally {
      await app.close();
    }
  });
});
