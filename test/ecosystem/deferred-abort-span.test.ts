import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

const { start } = closedAfterEach();

// docs/operations.md, Traces: "a server span per operation"; Metrics: graphql_operation_duration_seconds, "duration
// until the last deferred part". An operation with @defer whose client leaves while its first part is still being
// executed resolved to a stream nobody ever reads: the span's and the timer's end waited on that stream's onEnd,
// which never came. The span was never exported (its children pointed at a parent no backend had), and the
// histogram missed the operation graphql_operations_total counted.
describe('a @defer operation whose client leaves before the first part', () => {
  it('still ends its span and observes its duration', async () => {
    const spans = new InMemorySpanExporter();
    const { logger, lines } = captureLogs('info');
    // The upstream never answers: the first part waits for it until the client leaves.
    const { upstream, facade } = await start(
      () => undefined,
      { PIM_CACHE: 'false' },
      { logger, extras: { spanExporter: spans } },
    );
    const client = httpRequest({
      host: '127.0.0.1',
      port: facade.port,
      path: '/graphql',
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'x-request-id': 'leaves' },
    });
    client.on('error', () => {});
    client.end(
      JSON.stringify({
        query: 'query Left { a: catalogProducts(catalogId: "A") ... @defer { b: catalogProducts(catalogId: "B") } }',
      }),
    );
    await expect.poll(() => upstream.requests.length).toBe(2);
    client.destroy();
    await expect.poll(() => lines.filter((l) => l.reqId === 'leaves').map((l) => l.msg)).toEqual(['client went away']);
    // Both upstream calls were cut with the request: their spans end.
    await expect.poll(() => spans.getFinishedSpans().filter((s) => s.kind === 2)).toHaveLength(2);
    await expect.poll(() => spans.getFinishedSpans().filter((s) => s.name === 'query Left')).toHaveLength(1);
    const metrics = await (await fetch(`${facade.origin}/metrics`)).text();
    const labels = '{operation_type="query",operation_name="Left"}';
    expect(metrics).toContain(`graphql_operations_total${labels} 1`);
    expect(metrics).toContain(`graphql_operation_duration_seconds_count${labels} 1`);
  });
});
