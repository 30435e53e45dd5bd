import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

const { start } = closedAfterEach();

// /readiness asks the PIM for a made-up group, whose 404 is the answer it wants. Traced, each probe (every few seconds,
// on every replica) exported a root client span with status ERROR: an error rate in the tracing backend that no
// caller's request ever had. The probe is no caller's work and is not traced; a request's calls still are.
it('exports no span for the readiness probe, and still one for a request', async () => {
  const spans = new InMemorySpanExporter();
  const { upstream, facade } = await start(
    (req, res) =>
      req.url?.includes('/groups')
        ? void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404,"error":"No group"}')
        : echo(req, res),
    { PIM_CACHE: 'false' },
    { extras: { spanExporter: spans } },
  );
  expect((await fetch(`${facade.origin}/readiness`)).status).toBe(200);
  expect(upstream.requests.some((r) => r.url?.includes('/groups'))).toBe(true);
  expect((await facade.post('{ catalogProducts(catalogId: "MACHINERY") }')).body.errors).toBeUndefined();
  await expect
    .poll(() => spans.getFinishedSpans().map((span) => span.attributes['pim.operation']))
    .toContain('searchProducts');
  expect(spans.getFinishedSpans().map((span) => span.attributes['pim.operation'])).not.toContain(
    'listClassificationGroups',
  );
});
