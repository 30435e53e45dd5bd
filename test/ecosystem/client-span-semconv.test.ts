import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

const { start } = closedAfterEach();

// OpenTelemetry semantic conventions, HTTP client spans: `server.address` and `server.port` are required (tracing
// backends draw the PIM as a peer service from them), and `error.type` is required when the call failed (the
// status code as a string, else a low-cardinality error name). The client spans carried neither: the PIM never
// appeared in a service graph, and failed calls could not be grouped by why they failed.
describe('client spans of upstream calls', () => {
  it('name the PIM as server.address/server.port and say a failure in error.type', async () => {
    const spans = new InMemorySpanExporter();
    const handler = (req: Parameters<typeof echo>[0], res: Parameters<typeof echo>[1]) =>
      req.url?.includes('/BUSY/')
        ? void res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":503}')
        : echo(req, res);
    const { upstream, facade } = await start(
      handler,
      { PIM_CACHE: 'false', PIM_RETRIES: '0' },
      { extras: { spanExporter: spans } },
    );
    await facade.post('{ ok: catalogProducts(catalogId: "OK") busy: catalogProducts(catalogId: "BUSY") }');
    const calls = spans.getFinishedSpans().filter((s) => s.kind === 2);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'server.port': upstream.port });
    }
    const failed = calls.find((s) => s.status.code === 2)!;
    expect(failed.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    const succeeded = calls.find((s) => s.status.code !== 2)!;
    expect(succeeded.attributes['error.type']).toBeUndefined();
  });
});
