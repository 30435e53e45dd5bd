import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

// docs/operations.md, Traces: "The readiness probe's call (a made-up group, whose 404 readiness wants) is no caller's
// and is not traced." The breaker asks the PIM the same made-up group before it opens (its probe): that call is no
// caller's either, yet it went out as a client span (a NOT_FOUND error) under the operation whose fault reached the
// threshold, in that caller's trace, with its traceparent sent to the PIM.
const servers = closedAfterEach();

const handler: UpstreamHandler = (req, res) => {
  if (req.url?.includes('readiness-probe'))
    return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404,"error":"No such"}');
  res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":503}');
};

it("does not trace the breaker's probe under the caller whose fault set it off", async () => {
  const spans = new InMemorySpanExporter();
  const { upstream, facade } = await servers.start(
    handler,
    { PIM_CACHE: 'false', PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '2', PIM_STALE_IF_ERROR_MS: '0' },
    { extras: { spanExporter: spans } },
  );
  for (let i = 0; i < 3; i++) await facade.post(`query Broken { catalogProducts(catalogId: "DOWN${i}") }`);
  await expect.poll(() => upstream.requests.filter((r) => r.url.includes('readiness-probe')).length).toBe(1);
  const probe = upstream.requests.find((r) => r.url.includes('readiness-probe'))!;
  await new Promise((resolve) => setTimeout(resolve, 100));
  const traced = spans.getFinishedSpans().filter((s) => s.attributes['pim.operation'] === 'listClassificationGroups');
  expect(
    traced.map((s) => `${s.name} ${s.status.message}`),
    'client spans of the probe',
  ).toEqual([]);
  expect(probe.headers.traceparent, 'traceparent sent with the probe').toBeUndefined();
});
