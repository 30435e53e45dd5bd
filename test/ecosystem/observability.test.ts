import { Writable } from 'node:stream';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { echo, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { serveApp } from './serve.ts';

const searchTemplate = '/pxm/pimapi/v1/catalogs/:catalogId/products/search';
const groupTemplate = '/pxm/pimapi/v1/classifications/:classificationId/groups/:classificationGroupId';

// Products answer from the echo; group reads are 404, except group BUSY, which is 503 once.
let busyOnce = true;
function handler(req: Parameters<typeof echo>[0], res: Parameters<typeof echo>[1]) {
  if (req.url?.includes('/groups/BUSY') && busyOnce) {
    busyOnce = false;
    return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":503}');
  }
  if (req.url?.includes('/groups/')) {
    return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404,"error":"No group"}');
  }
  echo(req, res);
}

let upstream: Upstream;
let server: Awaited<ReturnType<typeof serveApp>>;
const spans = new InMemorySpanExporter();
const logLines: Array<Record<string, any>> = [];
const rawLog: string[] = [];

beforeAll(async () => {
  upstream = await startUpstream(handler);
  const sink = new Writable({
    write(chunk, _encoding, done) {
      rawLog.push(String(chunk));
      logLines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  server = await serveApp(
    upstream.url,
    { PIM_CACHE: 'false', PIM_RETRY_BASE_MS: '1' },
    { logger: pino({ level: 'info' }, sink), extras: { spanExporter: spans } },
  );
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});
beforeEach(() => {
  upstream.reset();
  spans.reset();
});

async function post(query: string, headers: Record<string, string> = {}) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { response, body: await response.json() };
}

/** The value of one sample line in Prometheus text format, e.g. `name{a="b"}`. */
async function scrape() {
  const response = await fetch(`${server.origin}/metrics`);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await response.text();
  return (sample: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
    return line === undefined ? undefined : Number(line.slice(sample.length + 1));
  };
}

describe('/metrics', () => {
  it('counts operations, errors by code, upstream calls by operation and status, dedup hits and retries', async () => {
    const { body } = await post(`query Observed {
      a: catalogProducts(catalogId: "MACHINERY", pageSize: 1)
      b: catalogProducts(catalogId: "MACHINERY", pageSize: 1)
      missing: classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "NOPE")
      busy: classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "BUSY")
    }`);
    expect(body.errors.map((e: any) => e.extensions.code).sort()).toEqual(['NOT_FOUND', 'NOT_FOUND']);
    const value = await scrape();
    const op = 'operation_type="query",operation_name="Observed"';
    expect(value(`graphql_operations_total{${op}}`)).toBe(1);
    expect(value(`graphql_operation_duration_seconds_count{${op}}`)).toBe(1);
    expect(value('graphql_errors_total{code="NOT_FOUND"}')).toBe(2);
    expect(value('pim_upstream_requests_total{operation="searchProducts",status="2xx"}')).toBe(1);
    expect(value('pim_upstream_requests_total{operation="getClassificationGroup",status="404"}')).toBe(2);
    expect(value('pim_upstream_requests_total{operation="getClassificationGroup",status="503"}')).toBe(1);
    expect(value('pim_upstream_request_duration_seconds_count{operation="searchProducts",status="2xx"}')).toBe(1);
    expect(value('pim_dedup_hits_total{operation="searchProducts"}')).toBe(1);
    expect(value('pim_upstream_retries_total{operation="getClassificationGroup"}')).toBe(1);
    expect(value('pim_upstream_breaker_state{state="closed"}')).toBe(1);
    expect(value('pim_upstream_breaker_state{state="open"}')).toBe(0);
    expect(upstream.requests).toHaveLength(4);
  });

  it('keeps a registry per app, so two apps in one process count apart', async () => {
    const other = await serveApp(upstream.url);
    try {
      const response = await fetch(`${other.origin}/metrics`);
      expect(await response.text()).not.toMatch(/graphql_operations_total\{/);
    } finally {
      await other.close();
    }
  });
});

describe('request id and logs', () => {
  it('takes the caller id, answers with it, forwards it upstream and logs it without credentials', async () => {
    const { response } = await post('query Logged { catalogProducts(catalogId: "MACHINERY") }', {
      'x-request-id': 'req-42',
      'x-api-key': 'secret-key-value',
    });
    expect(response.headers.get('x-request-id')).toBe('req-42');
    expect(upstream.requests[0]!.headers['x-request-id']).toBe('req-42');
    expect(upstream.requests[0]!.headers['x-api-key']).toBe('secret-key-value');
    expect(logLines.find((l) => l.reqId === 'req-42')).toMatchObject({
      msg: 'request completed',
      method: 'POST',
      path: '/graphql',
      status: 200,
      operations: ['query Logged'],
    });
    expect(rawLog.join('')).not.toContain('secret-key-value');
  });

  it('replaces a missing or unsafe id with a generated one', async () => {
    const { response } = await post('{ catalogProducts(catalogId: "MACHINERY") }', { 'x-request-id': 'a b{c}' });
    const id = response.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(upstream.requests[0]!.headers['x-request-id']).toBe(id);
  });
});

describe('tracing', () => {
  it('records an operation span with one child per upstream call, templated and without ids or keys', async () => {
    await post(
      `query Traced {
        catalogProducts(catalogId: "MACHINERY", pageSize: 1)
        classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "NOPE")
      }`,
      { 'x-api-key': 'secret-key-value' },
    );
    const finished = spans.getFinishedSpans();
    const operation = finished.find((s) => s.name === 'query Traced')!;
    expect(operation.attributes).toMatchObject({
      'graphql.operation.type': 'query',
      'graphql.operation.name': 'Traced',
    });
    const children = finished.filter((s) => s.parentSpanContext?.spanId === operation.spanContext().spanId);
    expect(children.map((s) => s.name).sort()).toEqual([`GET ${searchTemplate}`, `GET ${groupTemplate}`].sort());
    const group = children.find((s) => s.name === `GET ${groupTemplate}`)!;
    expect(group.attributes).toMatchObject({
      'pim.operation': 'getClassificationGroup',
      'http.request.method': 'GET',
      'url.template': groupTemplate,
      'http.response.status_code': 404,
    });
    expect(children.every((s) => s.spanContext().traceId === operation.spanContext().traceId)).toBe(true);
    const everything = JSON.stringify(finished.map((s: ReadableSpan) => [s.name, s.attributes]));
    expect(everything).not.toMatch(/MACHINERY|NOPE|secret-key-value/);
  });

  it('sends spans to the configured OTLP/HTTP endpoint', async () => {
    const collector = await startUpstream((_req, res) => void res.writeHead(200).end());
    const app = await serveApp(upstream.url, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    try {
      await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ catalogProducts(catalogId: "MACHINERY") }' }),
      });
    } finally {
      // Closing flushes the batch of spans.
      await app.close();
      await collector.close();
    }
    expect(collector.requests).toMatchObject([{ method: 'POST', url: '/v1/traces' }]);
  });
});
