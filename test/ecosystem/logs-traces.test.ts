import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { echo, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

const searchTemplate = '/pxm/pimapi/v1/catalogs/:catalogId/products/search';
const groupTemplate = '/pxm/pimapi/v1/classifications/:classificationId/groups/:classificationGroupId';

// Products answer from the echo; group reads are 404.
function handler(req: Parameters<typeof echo>[0], res: Parameters<typeof echo>[1]) {
  if (!req.url?.includes('/groups/')) return echo(req, res);
  res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404,"error":"No group"}');
}

let upstream: Upstream;
let server: Facade;
const spans = new InMemorySpanExporter();
const { logger, lines: logLines, raw: rawLog } = captureLogs('info');

beforeAll(async () => {
  upstream = await startUpstream(handler);
  server = await startFacade(upstream.url, { PIM_CACHE: 'false' }, { logger, extras: { spanExporter: spans } });
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});
beforeEach(() => {
  upstream.reset();
  spans.reset();
});

const post = (query: string, headers?: Record<string, string>) => server.post(query, undefined, headers);

describe('request id and logs', () => {
  it('takes the caller id, answers with it, forwards it upstream and logs it without credentials', async () => {
    const { headers } = await post('query Logged { catalogProducts(catalogId: "MACHINERY") }', {
      'x-request-id': 'req-42',
      'x-api-key': 'secret-key-value',
    });
    expect(headers.get('x-request-id')).toBe('req-42');
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

  it('logs contract errors (here NOT_FOUND) as outcomes, not as server errors', async () => {
    const before = logLines.length;
    const { body } = await post('{ classificationGroup(classificationId: "E", classificationGroupId: "missing") }');
    expect(body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(logLines.slice(before).filter((l) => l.level >= 50)).toEqual([]);
  });

  it('replaces a missing or unsafe id with a generated one', async () => {
    const { headers } = await post('{ catalogProducts(catalogId: "MACHINERY") }', { 'x-request-id': 'a b{c}' });
    const id = headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(upstream.requests[0]!.headers['x-request-id']).toBe(id);
  });

  // Refused input is the client's mistake: Yoga logged each at error level, quoting the value (a 64 KB variable made
  // a line of 320 KB, and ten in a batch ten of them), whenever the refusal was given its code as a new error.
  it('logs no error line for a variable it refuses, nor the value', async () => {
    const before = logLines.length;
    const value = `V${'x'.repeat(5_000)}`;
    const { body } = await server.post('query($p: Int) { catalogProducts(catalogId: "a", page: $p) }', { p: value });
    expect(body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const lines = logLines.slice(before);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain(value);
  });

  // A 60,000-character operation name made a 60 KB line, and 140 of them filled what a slow stdout may hold.
  it('clips the operation names and the path a client chose to 256 characters in its line', async () => {
    await post(`query Q${'x'.repeat(60_000)} { __typename }`, { 'x-request-id': 'req-long-name' });
    const response = await fetch(`${server.origin}/${'p'.repeat(15_000)}`, {
      headers: { 'x-request-id': 'req-long-path' },
    });
    expect(response.status).toBe(404);
    const named = logLines.find((l) => l.reqId === 'req-long-name');
    expect(named).toMatchObject({ operations: [`query Q${'x'.repeat(255)}…`] });
    const pathed = logLines.find((l) => l.reqId === 'req-long-path');
    expect(pathed).toMatchObject({ status: 404, path: `/${'p'.repeat(255)}…` });
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
    // The operation's status says what failed by its code: its message named the ids.
    expect(operation.status).toEqual({ code: 2, message: 'NOT_FOUND' });
    const everything = JSON.stringify(finished.map((s: ReadableSpan) => [s.name, s.attributes, s.status]));
    expect(everything).not.toMatch(/MACHINERY|NOPE|secret-key-value/);
  });

  it('names operation spans as metrics label them: a long client-chosen name is `other`', async () => {
    const long = `Q_${'x'.repeat(60_000)}`;
    await post(`query ${long} { catalogProducts(catalogId: "MACHINERY", pageSize: 1) }`);
    const operation = spans.getFinishedSpans().find((s) => s.kind === 1)!;
    expect(operation.name).toBe('query other');
    expect(String(operation.attributes['graphql.operation.name'])).toHaveLength(257);
  });

  // OpenTelemetry's GraphQL conventions: an operation without a name is a span named by its type alone, with no
  // graphql.operation.name (it said `anonymous`, a name no client gave, which a backend groups as one).
  it('names an anonymous operation by its type and gives it no operation name', async () => {
    await post('{ catalogProducts(catalogId: "MACHINERY", pageSize: 1) }');
    const operation = spans.getFinishedSpans().find((s) => s.kind === 1)!;
    expect(operation.name).toBe('query');
    expect(operation.attributes).toEqual({
      'graphql.operation.type': 'query',
      'http.request.header.x-request-id': [expect.any(String)],
    });
  });

  it('continues the caller trace and passes it on to the PIM as traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await post('query Joined { catalogProducts(catalogId: "MACHINERY") }', {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    const finished = spans.getFinishedSpans();
    const operation = finished.find((s) => s.name === 'query Joined')!;
    expect(operation.spanContext().traceId).toBe(traceId);
    expect(operation.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    const call = finished.find((s) => s.parentSpanContext?.spanId === operation.spanContext().spanId)!;
    expect(upstream.requests[0]!.headers.traceparent).toBe(`00-${traceId}-${call.spanContext().spanId}-01`);
  });

  /** What a collector received from a façade started with `env(collector's URL)` that served one query, then closed. */
  async function spansSent(env: (collector: string) => Record<string, string>) {
    const collector = await startUpstream((_req, res) => void res.writeHead(200).end());
    try {
      const app = await startFacade(upstream.url, env(collector.url));
      try {
        await fetch(app.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ catalogProducts(catalogId: "MACHINERY") }' }),
        });
      } finally {
        // Closing flushes the batch of spans.
        await app.close();
      }
    } finally {
      await collector.close();
    }
    return collector.requests;
  }

  it('sends spans to the configured OTLP/HTTP endpoint', async () => {
    const sent = await spansSent((url) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: url }));
    expect(sent).toMatchObject([{ method: 'POST', url: '/v1/traces' }]);
  });

  it('sends spans to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, and none with OTEL_SDK_DISABLED=true', async () => {
    const traces = (url: string) => ({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${url}/otlp/traces` });
    expect(await spansSent(traces)).toMatchObject([{ method: 'POST', url: '/otlp/traces' }]);
    expect(await spansSent((url) => ({ ...traces(url), OTEL_SDK_DISABLED: 'true' }))).toEqual([]);
  });
});
