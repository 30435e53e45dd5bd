import { readdirSync, readFileSync } from 'node:fs';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { marksMaxBytes, unmarkedMaxBytes } from '../src/pim/cache/revocations.ts';
import { MAX_WAITING_LOG_BYTES } from '../src/logger.ts';
import { DOCUMENT_CACHE_BYTES } from '../src/plugins/document-cache.ts';
import { composeSupergraph } from '../deploy/compose/compose-supergraph.ts';
import { imageEnv } from '../deploy/image/env.ts';
import { startFacade } from './helpers/facade.ts';
import { startUpstream } from './helpers/upstream.ts';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; spec?: any };
// The kinds deploy/ uses; a manifest of any other kind fails until it is added here.
const models: Record<string, new (object: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};
type EnvVar = { name: string; value?: string; valueFrom?: unknown };

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
function parseYaml(path: string): any[] {
  return parseAllDocuments(read(path)).map((doc) => {
    expect(doc.errors, path).toEqual([]);
    return doc.toJS();
  });
}

const kubernetesDir = 'deploy/kubernetes';
const files = readdirSync(new URL(`../${kubernetesDir}/`, import.meta.url)).filter((f) => f.endsWith('.yaml'));
const manifests = files
  .filter((file) => file !== 'kustomization.yaml')
  .flatMap((file) => parseYaml(`${kubernetesDir}/${file}`).map((object: Manifest) => ({ file, object })));
const find = (kind: string, name = 'pim-graphql-facade') =>
  manifests.find(({ object }) => object.kind === kind && object.metadata.name === name)!.object;
const deployment = find('Deployment');
const container = deployment.spec.template.spec.containers[0];
const compose = parseYaml('deploy/compose/compose.yaml')[0];

// The server's settings, as docs/configuration.md lists them (a test keeps that table and the schema equal).
const settings = new Set([...read('docs/configuration.md').matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]));
// Read by Node and jemalloc, not by the server (the heap flags, malloc's settings), and those the manifest reads
// itself (`$(POD_NAME)` in OTEL_RESOURCE_ATTRIBUTES).
const runtimeVariables = new Set(['NODE_OPTIONS', 'MALLOC_CONF', 'POD_NAME', 'POD_NAMESPACE']);
const envOf = (vars: EnvVar[]) =>
  // A Secret's or the pod's value is only known in the cluster: a placeholder stands in for it, as for a `$(NAME)`.
  Object.fromEntries(
    vars.map(({ name, value, valueFrom }) => [
      name,
      valueFrom ? 'from-the-cluster' : value!.replace(/\$\(\w+\)/g, 'x'),
    ]),
  );

describe('Kubernetes manifests', () => {
  it.each(manifests.map(({ file, object }) => [`${file}: ${object.kind} ${object.metadata.name}`, object] as const))(
    '%s validates against the Kubernetes schema',
    (_, object) => {
      const Model = models[`${object.apiVersion}/${object.kind}`];
      expect(Model, `a model for ${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(() => new Model!(object).validate()).not.toThrow();
    },
  );

  it('the validator refuses a wrongly typed field, so the check above is not vacuous', () => {
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].readinessProbe.httpGet.path = 5;
    expect(() => new Deployment(broken as IDeployment).validate()).toThrow(/path must be string/);
  });

  it('kustomization.yaml lists every manifest', () => {
    const [kustomization] = parseYaml(`${kubernetesDir}/kustomization.yaml`);
    expect([...kustomization.resources].sort()).toEqual(files.filter((f) => f !== 'kustomization.yaml').sort());
  });

  it('sets only real settings of the server, with values it accepts', () => {
    const names = container.env.map((v: EnvVar) => v.name);
    expect(names.filter((name: string) => !settings.has(name) && !runtimeVariables.has(name))).toEqual([]);
    expect(() => loadConfig(envOf(container.env))).not.toThrow();
    expect(container.env.find((v: EnvVar) => v.name === 'PIM_API_KEY').valueFrom.secretKeyRef).toBeDefined();
  });

  it('probes a port the server listens on, at paths the real server answers', async () => {
    const config = loadConfig(envOf(container.env));
    const port = container.ports.find((p: { name: string }) => p.name === container.readinessProbe.httpGet.port);
    expect(port.containerPort).toBe(config.port);
    expect(container.livenessProbe.httpGet.port).toBe(port.name);
    const service = find('Service');
    expect(service.spec.ports[0].targetPort).toBe(port.name);

    const upstream = await startUpstream();
    const facade = await startFacade(upstream.url);
    try {
      expect((await fetch(`${facade.origin}${container.livenessProbe.httpGet.path}`)).status).toBe(200);
      expect((await fetch(`${facade.origin}${container.startupProbe.httpGet.path}`)).status).toBe(200);
      const readiness = await fetch(`${facade.origin}${container.readinessProbe.httpGet.path}`);
      expect([readiness.status, await readiness.json()]).toEqual([200, { status: 'ready' }]);
    } finally {
      await facade.close();
      await upstream.close();
    }
  });

  // Equal, the kubelet's SIGKILL and the server's own exit at the end of its margin race: the last log lines may be lost.
  it('gives SIGTERM room: grace period longer than the preStop pause, SHUTDOWN_GRACE_MS and the 5 s exit margin', () => {
    const { http } = loadConfig(envOf(container.env));
    const pause = container.lifecycle.preStop.sleep.seconds;
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
      pause + http.shutdownGraceMs! / 1000 + 5,
    );
  });

  // On the main port, /metrics (operation names, upstream figures) and the purge would be public through the Service.
  it('serves the metrics on a port of their own, declared on the pod and not routed by the Service', () => {
    const { observability } = loadConfig(envOf(container.env));
    const port = container.ports.find((p: { name: string }) => p.name === 'metrics');
    expect(port?.containerPort).toBeDefined();
    expect(observability.metricsPort).toBe(port.containerPort);
    const routed = find('Service').spec.ports.map((p: { targetPort: unknown }) => p.targetPort);
    expect(routed).not.toContain('metrics');
    expect(routed).not.toContain(port.containerPort);
    // In the cluster only (no Ingress names it): where Prometheus and the publish hook's purge reach every pod.
    const internal = find('Service', 'pim-graphql-facade-internal');
    expect(internal.spec.selector).toEqual(find('Service').spec.selector);
    expect(internal.spec.type ?? 'ClusterIP').toBe('ClusterIP');
    expect(internal.spec.ports.map((p: { targetPort: unknown }) => p.targetPort)).toEqual(['metrics']);
  });

  it('runs as non-root on a read-only root filesystem, with the heap flags and malloc settings the image sets', () => {
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(container.resources.limits.memory).toMatch(/^\d+Mi$/);
    const image = imageEnv(read('Dockerfile'));
    expect(envOf(container.env).NODE_OPTIONS).toBe(image.NODE_OPTIONS);
    // The image preloads jemalloc; MALLOC_CONF is its settings (.ci/image checks the library is mapped).
    expect(image.LD_PRELOAD).toBe('libjemalloc.so.2');
    expect(image.MALLOC_CONF).toMatch(/narenas:\d+/);
    expect(envOf(container.env).MALLOC_CONF).toBe(image.MALLOC_CONF);
  });

  // The caches keep their entries on the heap (the HTTP cache's in Redis here): full, with the upstream
  // bytes in flight, they must leave the old-space cap room for the requests, or a busy pod dies of OOM.
  it('sizes the caches and the bytes in flight to half the heap the image allows, as the image does', () => {
    const env = envOf(container.env);
    const oldSpaceMiB = Number(env.NODE_OPTIONS!.match(/--max-old-space-size=(\d+)/)![1]);
    const { pim, responseCache } = loadConfig(env);
    const held = [pim.cache && pim.cache.maxBytes, pim.stale.maxBytes, responseCache && responseCache.maxBytes];
    // The log lines a stalled stdout leaves waiting are held on the heap too, and so are parsed documents.
    const total = held.reduce<number>(
      (sum, bytes) => sum + (bytes || 0),
      pim.byteLimits.maxInflightBytes + MAX_WAITING_LOG_BYTES + DOCUMENT_CACHE_BYTES,
    );
    expect(total / 2 ** 20).toBeLessThanOrEqual(oldSpaceMiB / 2);
    const image = imageEnv(read('Dockerfile'));
    for (const name of [
      'PIM_CACHE_MAX_BYTES',
      'PIM_STALE_MAX_BYTES',
      'RESPONSE_CACHE_MAX_BYTES',
      'PIM_MAX_INFLIGHT_BYTES',
    ]) {
      expect([name, env[name]]).toEqual([name, image[name]]);
    }
  });

  it('HPA and PodDisruptionBudget point at the Deployment and its pods', () => {
    expect(find('HorizontalPodAutoscaler').spec.scaleTargetRef.name).toBe(deployment.metadata.name);
    const labels = deployment.spec.template.metadata.labels;
    expect(labels).toMatchObject(find('PodDisruptionBudget').spec.selector.matchLabels);
    expect(labels).toMatchObject(find('Service').spec.selector);
    const redis = find('Service', 'pim-graphql-facade-redis');
    expect(envOf(container.env).REDIS_URL).toBe(`redis://${redis.metadata.name}:${redis.spec.ports[0].port}`);
  });

  // Readiness follows the PIM (test/ecosystem/readiness-*.test.ts): in its outage every replica runs unready, and under
  // the default policy (IfHealthyBudget) the eviction API refused every eviction: node drains waited for the PIM.
  it('lets unready pods be evicted, so a PIM outage does not hold up node drains', () => {
    expect(container.readinessProbe.httpGet.path).toBe('/readiness');
    expect(find('PodDisruptionBudget').spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });

  // docs/configuration.md, HTTP_KEEP_ALIVE_TIMEOUT_MS: above the idle timeout of a proxy that keeps connections to the
  // pods open (ingress-nginx's and an ALB's are 60 s), or now and then a 502; the public Service is an ingress's.
  it('keeps idle connections open longer than the ingress in front does', () => {
    expect(loadConfig(envOf(container.env)).http.keepAliveTimeoutMs).toBeGreaterThan(60_000);
  });

  // Redis holds answers the façade serves as the PIM's and the records that end revoked keys' copies, and asks for no
  // password: any pod of the cluster could read, plant or flush them.
  it('admits only the façade pods to Redis', () => {
    const redisPods = find('Deployment', 'pim-graphql-facade-redis').spec.template.metadata.labels;
    const policy = find('NetworkPolicy', 'pim-graphql-facade-redis');
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    expect(redisPods).toMatchObject(policy.spec.podSelector.matchLabels);
    expect(policy.spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: deployment.spec.template.metadata.labels } }],
        ports: [{ protocol: 'TCP', port: find('Service', 'pim-graphql-facade-redis').spec.ports[0].port }],
      },
    ]);
  });
});

// Redis's `--maxmemory` in a list of arguments, in bytes.
const maxmemoryOf = (args: string[]) => {
  const [, size, unit] = /^(\d+)(mb|gb)$/.exec(args[args.indexOf('--maxmemory') + 1]!)!;
  return Number(size) * 2 ** (unit === 'gb' ? 30 : 20);
};

// Each family the façade keeps in Redis is bounded by a setting. Past maxmemory, Redis's own LRU evicts across
// families (the index of one, APQ documents for stale copies). Redis's allocator takes up to a quarter more than the
// bounds count (13-25 %, measured for 0.6-20 KB entries); a fifth of maxmemory is left over even then.
describe('Redis beside the façade', () => {
  it.each([
    [
      'Kubernetes',
      envOf(container.env),
      find('Deployment', 'pim-graphql-facade-redis').spec.template.spec.containers[0].args,
    ],
    ['compose', compose.services.facade.environment, compose.services.redis.command],
  ])('%s: the bounds of what the façade keeps there fit within its maxmemory', (_name, env, args) => {
    const { pim, persisted } = loadConfig(env);
    const families = [
      pim.cache ? pim.cache.redisMaxBytes : 0,
      pim.stale.redisMaxBytes,
      marksMaxBytes(pim.stale.redisMaxBytes),
      // The 401s and the 404s heard with no mark, a family each.
      2 * unmarkedMaxBytes(pim.stale.redisMaxBytes),
      persisted.apq ? persisted.apq.maxBytes : 0,
    ];
    expect(1.25 * families.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(maxmemoryOf(args) * 0.8);
  });
});

describe('compose fleet', () => {
  it('runs two façade replicas with real settings of the server, behind the gateway', () => {
    const { facade, gateway } = compose.services;
    expect(facade.deploy.replicas).toBe(2);
    expect(Object.keys(facade.environment).filter((name) => !settings.has(name))).toEqual([]);
    expect(() => loadConfig(facade.environment)).not.toThrow();
    expect(facade.environment.FEDERATION_SDL).toBe('true');
    expect(gateway.depends_on.facade.condition).toBe('service_healthy');
  });

  it('gives the gateway the supergraph composed from the current schema', async () => {
    expect(read('deploy/compose/supergraph.graphql')).toBe(await composeSupergraph());
  });
});
