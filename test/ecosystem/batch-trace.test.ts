import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

const { start } = closedAfterEach();

// docs/operations.md, Traces: a server span per operation with a client span per upstream attempt as its child, and
// each upstream call carries a traceparent of that trace. A batch's operations share one DataLoader, whose batch of
// calls ran in the context of its first load: every call went under the first operation's span.
describe('tracing a batch (GRAPHQL_BATCHING=true)', () => {
  it('makes each operation the parent of its own upstream calls', async () => {
    const spans = new InMemorySpanExporter();
    const { upstream, facade } = await start(
      echo,
      { GRAPHQL_BATCHING: 'true', PIM_CACHE: 'false' },
      { extras: { spanExporter: spans } },
    );
    await facade.postBody([
      { query: 'query A { catalogProducts(catalogId: "CAT-A") }' },
      { query: 'query B { catalogProducts(catalogId: "CAT-B") }' },
    ]);
    const finished = spans.getFinishedSpans();
    const b = finished.find((s) => s.name === 'query B')!;
    const childrenOfB = finished.filter((s) => s.parentSpanContext?.spanId === b.spanContext().spanId);
    expect(childrenOfB.map((s) => s.name)).toEqual(['GET /pxm/pimapi/v1/catalogs/:catalogId/products/search']);
    const sentForB = upstream.requests.find((r) => r.url.includes('/CAT-B/'))!;
    expect(String(sentForB.headers.traceparent).split('-')[1]).toBe(b.spanContext().traceId);
  });
});
