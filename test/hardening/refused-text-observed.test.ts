import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { partsOf } from '../helpers/multipart.ts';
import { cacheableEcho, echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();

async function tooLarge(facade: { get: (path: string) => Promise<{ text: string }> }): Promise<number> {
  const text = (await facade.get('/metrics')).text;
  return Number(/^graphql_errors_total\{code="UPSTREAM_TOO_LARGE"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

// Ten aliases of 400 characters of one cacheable search: ~1 KB of answers counted by send(), a text of ~5 KB.
const query = `{ ${Array.from({ length: 10 }, (_, i) => `a${i}${'_'.repeat(400)}: catalogProducts(catalogId: "C")`).join(' ')} }`;

it('counts a result refused as it is serialized in graphql_errors_total', async () => {
  const { facade } = await servers.start(cacheableEcho(60), { PIM_MAX_REQUEST_BYTES: '4000' });
  const before = await tooLarge(facade);
  const answer = await facade.get(`/graphql?query=${encodeURIComponent(query)}`);
  expect(answer.body?.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TOO_LARGE');
  expect(await tooLarge(facade), 'graphql_errors_total{code="UPSTREAM_TOO_LARGE"} after a refused answer').toBe(
    before + 1,
  );
});

const representations = Array.from({ length: 100 }, (_, i) => ({ __typename: 'Catalog', catalogId: String(i) }));
// Each streamed item carries the 55,000-character label: the 19th passes 1,000,000 bytes.
const labelQuery = `query($r: [_Any!]!) { _entities(representations: $r) @stream(label: "${'L'.repeat(55_000)}") { __typename } }`;

it('ends a stream at its first refused part, and counts that refusal', async () => {
  const { facade } = await servers.start(echo, { PIM_MAX_REQUEST_BYTES: '1000000' });
  const before = await tooLarge(facade);
  const streamed = await facade.post(labelQuery, { r: representations }, { accept: 'multipart/mixed' });
  expect(streamed.status).toBe(200);
  const refusals = streamed.text.split('UPSTREAM_TOO_LARGE').length - 1;
  expect(refusals, 'refused parts sent in one stream').toBe(1);
  expect(streamed.text).toMatch(/"hasNext":false/);
  expect(await tooLarge(facade), 'graphql_errors_total{code="UPSTREAM_TOO_LARGE"} after a refused part').toBe(
    before + 1,
  );
});

// A deferred fragment of 100 representations × 3 aliases of 3,900 characters (1.2 MB, no PIM call) is refused; another
// one, waiting on a slow PIM answer, would come after it.
const deferQuery = `query($r: [_Any!]!) {
  __typename
  ... @defer(label: "big") { _entities(representations: $r) { ... on Catalog { ${Array.from(
    { length: 3 },
    (_, i) => `a${i}${'_'.repeat(3_900)}: __typename`,
  ).join(' ')} } } }
  ... @defer(label: "slow") { catalogProducts(catalogId: "C") }
}`;

it.each(['multipart/mixed', 'text/event-stream'])(
  'sends nothing of a %s stream after its refused part',
  async (accept) => {
    const slow = (req: Parameters<typeof echo>[0], res: Parameters<typeof echo>[1]) =>
      void setTimeout(() => echo(req, res), 300);
    const { facade } = await servers.start(slow, { PIM_MAX_REQUEST_BYTES: '1000000' });
    const streamed = await facade.post(deferQuery, { r: representations }, { accept });
    expect(streamed.status).toBe(200);
    const [, after = ''] = streamed.text.split('UPSTREAM_TOO_LARGE');
    expect(streamed.text).toContain('UPSTREAM_TOO_LARGE');
    expect(after, 'parts sent after the refused one').not.toContain('catalogProducts');
    expect(after).toMatch(/"hasNext":false/);
    if (accept === 'text/event-stream') expect(after).toMatch(/event: complete/);
  },
);

// docs/operations.md, Traces: "the error status carries the first error's code". The span took its status, and
// ended, when execution was done: before the text was serialized and refused.
async function serverSpan(spans: InMemorySpanExporter) {
  const server = () => spans.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER);
  await expect.poll(() => server().length).toBe(1);
  return server()[0]!;
}

it('gives the span of a result refused as it is serialized the refusal as its status', async () => {
  const spans = new InMemorySpanExporter();
  const { facade } = await servers.start(
    cacheableEcho(60),
    { PIM_MAX_REQUEST_BYTES: '4000' },
    { extras: { spanExporter: spans } },
  );
  const answer = await facade.get(`/graphql?query=${encodeURIComponent(query)}`);
  expect(answer.body?.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TOO_LARGE');
  expect((await serverSpan(spans)).status, "status of the refused result's span").toEqual({
    code: SpanStatusCode.ERROR,
    message: 'UPSTREAM_TOO_LARGE',
  });
});

it('gives the span of a stream ended by a refused part the refusal as its status', async () => {
  const spans = new InMemorySpanExporter();
  const { facade } = await servers.start(
    echo,
    { PIM_MAX_REQUEST_BYTES: '1000000' },
    { extras: { spanExporter: spans } },
  );
  const streamed = await facade.post(deferQuery, { r: representations }, { accept: 'multipart/mixed' });
  expect(streamed.text).toContain('UPSTREAM_TOO_LARGE');
  expect((await serverSpan(spans)).status, "status of the refused stream's span").toEqual({
    code: SpanStatusCode.ERROR,
    message: 'UPSTREAM_TOO_LARGE',
  });
});

// A plain result goes out as multipart/mixed or text/event-stream to a client that accepts only those (graphql-sse
// clients send `Accept: text/event-stream`): its text is serialized as the body is read, after the response hooks,
// where the metrics had counted its errors and its span had ended.
it.each(['text/event-stream', 'multipart/mixed'])(
  'counts and traces a plain result refused as it is serialized for a %s client',
  async (accept) => {
    const spans = new InMemorySpanExporter();
    const { facade } = await servers.start(
      cacheableEcho(60),
      { PIM_MAX_REQUEST_BYTES: '4000' },
      { extras: { spanExporter: spans } },
    );
    const before = await tooLarge(facade);
    const answer = await facade.post(query, undefined, { accept });
    expect(answer.text).toContain('UPSTREAM_TOO_LARGE');
    expect(await tooLarge(facade), 'graphql_errors_total{code="UPSTREAM_TOO_LARGE"} after a refused answer').toBe(
      before + 1,
    );
    expect((await serverSpan(spans)).status, "status of the refused result's span").toEqual({
      code: SpanStatusCode.ERROR,
      message: 'UPSTREAM_TOO_LARGE',
    });
  },
);

// A @defer answer's span took the code (and graphql.error.count) of its last part with errors: the first part's
// NOT_FOUND went out, the span said BAD_USER_INPUT and counted 2 errors of the 3 its client got.
it("gives a streamed answer's span the first error's code and counts every error sent", async () => {
  const spans = new InMemorySpanExporter();
  const notFound = (_req: unknown, res: ServerResponse) =>
    void res
      .writeHead(404, { 'content-type': 'application/json' })
      .end('{"status":404,"meta":{"languageId":"en"},"error":"No Products found"}');
  const { facade } = await servers.start(notFound, {}, { extras: { spanExporter: spans } });
  const long = 'x'.repeat(300);
  const answer = await facade.post(
    `query S { a: catalogProducts(catalogId: "A") ... @defer { b: catalogProducts(catalogId: "${long}") c: catalogProducts(catalogId: "${long}") } }`,
    undefined,
    { accept: 'multipart/mixed' },
  );
  const codes = partsOf(answer.text)
    .flatMap((part) => [...(part.errors ?? []), ...(part.incremental ?? []).flatMap((payload) => payload.errors ?? [])])
    .map((error) => error.extensions?.code);
  expect(codes).toEqual(['NOT_FOUND', 'BAD_USER_INPUT', 'BAD_USER_INPUT']);
  const span = await serverSpan(spans);
  expect(span.status, 'status of the streamed answer').toEqual({ code: SpanStatusCode.ERROR, message: 'NOT_FOUND' });
  expect(span.attributes['graphql.error.count'], 'errors counted on the span').toBe(3);
});
