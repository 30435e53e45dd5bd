import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const query = '{ catalogProducts(catalogId: "MACHINERY") }';

/** The resource attributes of the spans of one query, on a façade configured with `env`. */
async function resourceOf(env: Record<string, string>) {
  const spans = new InMemorySpanExporter();
  const { facade } = await servers.start(echo, env, { extras: { spanExporter: spans } });
  await facade.post(query);
  // The operation's span may end just after its answer is out.
  await expect.poll(() => spans.getFinishedSpans().length).toBeGreaterThan(0);
  const [span] = spans.getFinishedSpans();
  await span!.resource.waitForAsyncAttributes?.();
  return span!.resource.attributes;
}

// OTEL_RESOURCE_ATTRIBUTES is how a Deployment names the pod, namespace and environment (the downward API): spans
// carried `service.name` alone, so no two replicas' traces could be told apart.
it('gives spans the resource attributes of OTEL_RESOURCE_ATTRIBUTES, the host, the process and an instance id', async () => {
  const attributes = await resourceOf({
    OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name=web-1, deployment.environment=prod,team=catalog%20web',
  });
  expect(attributes).toMatchObject({
    'service.name': 'pim-graphql-facade',
    'k8s.pod.name': 'web-1',
    'deployment.environment': 'prod',
    team: 'catalog web',
    'process.pid': process.pid,
    'telemetry.sdk.language': 'nodejs',
  });
  expect(attributes['host.name']).toEqual(expect.any(String));
  expect(attributes['service.instance.id']).toEqual(expect.any(String));
});

it('names the service by OTEL_SERVICE_NAME, else by the service.name of OTEL_RESOURCE_ATTRIBUTES', async () => {
  const both = { OTEL_SERVICE_NAME: 'catalog-api', OTEL_RESOURCE_ATTRIBUTES: 'service.name=other' };
  expect((await resourceOf(both))['service.name']).toBe('catalog-api');
  expect((await resourceOf({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=other' }))['service.name']).toBe('other');
});

// The SDK tells OTel's diagnostic logger of a failed export, and none is set: a collector refusing every batch (or a
// gRPC port given for the OTLP/HTTP one) left traces missing without a word.
const delay = process.env.OTEL_BSP_SCHEDULE_DELAY;
afterEach(() => {
  if (delay === undefined) delete process.env.OTEL_BSP_SCHEDULE_DELAY;
  else process.env.OTEL_BSP_SCHEDULE_DELAY = delay;
});
it('counts the spans a collector refuses, and says so in one warn line', async () => {
  // The SDK's own setting: batches leave every 50 ms rather than 5 s.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  const collector = await servers.startUpstream((_req, res) => void res.writeHead(400).end('no'));
  const { logger, lines } = captureLogs('warn');
  const { facade } = await servers.start(echo, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }, { logger });
  for (let i = 0; i < 3; i++) await facade.post(query);
  await expect
    .poll(async () => (await facade.app.metrics()).body, { timeout: 5_000 })
    .toMatch(/^otel_spans_unexported_total [2-9]\d*$/m);
  expect(collector.requests.length).toBeGreaterThan(0);
  const warned = lines.filter((line) => line.msg === 'Spans could not be sent to the OTLP collector');
  expect(warned).toHaveLength(1);
  expect(warned[0]!.level).toBe(40);
});
