import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// docs/operations.md, Monitoring: `pim_upstream_requests_total` counts "every attempt at the PIM" and "a call that never
// left the connection queue ... is no attempt". A call still queued when its client leaves never reached the PIM either.
const servers = closedAfterEach();

const samples = (text: string, name: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))] as const);

it('counts no attempt at the PIM for a call whose client left while it was queued', async () => {
  const spans = new InMemorySpanExporter();
  // The PIM takes every call and answers none before the test ends: the first call holds the only connection.
  const { upstream, facade } = await servers.start(
    () => undefined,
    { PIM_MAX_CONCURRENCY: '1', PIM_CACHE: 'false', PIM_TIMEOUT_MS: '60000', GRAPHQL_BUDGET_MS: '30000' },
    { extras: { spanExporter: spans } },
  );
  const held = new AbortController();
  const first = facade.post('{ catalogProducts(catalogId: "SENT") }', undefined, {}).catch(() => undefined);
  void first;
  await expect.poll(() => upstream.requests.length).toBe(1);
  // This one waits behind it in the queue; its client leaves.
  const leaving = new AbortController();
  const queued = fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ catalogProducts(catalogId: "QUEUED") }' }),
    signal: leaving.signal,
  }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 300));
  leaving.abort();
  await queued;
  // The queued call's end is seen by the façade shortly after.
  await expect
    .poll(async () =>
      Number((await facade.get('/metrics')).text.match(/^graphql_client_disconnects_total (\d+)/m)?.[1]),
    )
    .toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(upstream.requests.map((r) => r.url)).toEqual([expect.stringContaining('/catalogs/SENT/')]);
  const text = (await facade.get('/metrics')).text;
  const attempts = samples(text, 'pim_upstream_requests_total');
  expect(attempts, JSON.stringify(attempts)).toEqual([]);
  expect(samples(text, 'pim_upstream_request_duration_seconds_count')).toEqual([]);
  held.abort();
});
