import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

// docs/operations.md, Monitoring: every request has a `request completed` line with `reqId` (the id echoed in
// x-request-id and sent upstream), and, with OTLP on, a server span per operation. Nothing joined the two: the line
// carried no trace id and the span no request id, so a slow or failed request's line (or the id a client reports)
// led to no trace. The span carries the id, as the semantic conventions write a request header.
const { start } = closedAfterEach();

describe("a request's log line and its trace", () => {
  it('can be found from one another (request id on the span, or trace id on the line)', async () => {
    const { logger, lines } = captureLogs('info');
    const spans = new InMemorySpanExporter();
    const { facade } = await start(echo, { PIM_CACHE: 'false' }, { logger, extras: { spanExporter: spans } });
    const { status } = await facade.post('query Joined { catalogProducts(catalogId: "A") }', undefined, {
      'x-request-id': 'join-me-42',
    });
    expect(status).toBe(200);
    await expect.poll(() => lines.find((l) => l.reqId === 'join-me-42')).toBeDefined();
    await expect.poll(() => spans.getFinishedSpans().find((s) => s.name === 'query Joined')).toBeDefined();
    const line = lines.find((l) => l.reqId === 'join-me-42')!;
    const span = spans.getFinishedSpans().find((s) => s.name === 'query Joined')!;
    expect(span.attributes['http.request.header.x-request-id']).toEqual([line.reqId]);
  });
});
