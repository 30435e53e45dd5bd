import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

// OpenTelemetry HTTP client span conventions: `http.response.status_code` is required whenever a response was received,
// not only on a failure. The client spans of successful PIM calls had none: a backend grouping calls by status (span
// metrics, the HTTP views of Tempo, Jaeger or Datadog) showed every success as a call without an answer.
const servers = closedAfterEach();

const handler: UpstreamHandler = (req, res) =>
  void res
    .writeHead(req.url?.includes('/PARTIAL/') ? 203 : 200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ status: 200, meta: {}, data: [] }));

it('gives a successful call its http.response.status_code', async () => {
  const spans = new InMemorySpanExporter();
  const { facade } = await servers.start(handler, { PIM_CACHE: 'false' }, { extras: { spanExporter: spans } });
  const { body } = await facade.post(
    '{ a: catalogProducts(catalogId: "OK") b: catalogProducts(catalogId: "PARTIAL") }',
  );
  expect(body.errors).toBeUndefined();
  const calls = spans.getFinishedSpans().filter((s) => s.kind === 2);
  const statuses = calls.map((s) => s.attributes['http.response.status_code']).sort();
  expect(statuses).toEqual([200, 203]);
  for (const call of calls) expect(call.attributes['error.type']).toBeUndefined();
});
