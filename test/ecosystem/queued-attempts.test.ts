import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults, type UpstreamHandler } from '../helpers/upstream.ts';

// docs/operations.md, Monitoring: `pim_upstream_requests_total` and `pim_upstream_request_duration_seconds` count
// "every attempt at the PIM" (the metric's help: "Attempts sent to the PIM REST service"; steps/telemetry.ts: "every
// attempt that reaches the wire"), and "time spent queued is never blamed on the upstream". A call that waited in
// the fair connection queue (PIM_MAX_CONCURRENCY) until its request's budget ran out never reached the PIM: it is no
// attempt at the PIM, and its seconds in the queue are no PIM latency. On a bad day (the queue full) the dashboards
// of upstream error rate and latency then blame the PIM for the façade's own queueing.
const servers = closedAfterEach();

const samples = (text: string, name: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))] as const);

it('counts and times only the attempts that reached the PIM, not calls that expired in the queue', async () => {
  // The PIM takes every call and answers none before the test ends: the first call holds the only connection.
  const { upstream, facade } = await servers.start(() => undefined, {
    PIM_MAX_CONCURRENCY: '1',
    PIM_CACHE: 'false',
    PIM_TIMEOUT_MS: '60000',
    GRAPHQL_BUDGET_MS: '1500',
  });
  const first = facade.post('{ catalogProducts(catalogId: "SENT") }');
  await expect.poll(() => upstream.requests.length).toBe(1);
  // This one waits behind it in the queue until its budget is spent.
  const queued = await facade.post('{ catalogProducts(catalogId: "QUEUED") }');
  expect(queued.body.errors[0].extensions.code).toBe('BUDGET_EXCEEDED');
  expect((await first).body.errors[0].extensions.code).toBe('BUDGET_EXCEEDED');
  // The PIM saw one call only.
  expect(upstream.requests.map((r) => r.url)).toEqual([expect.stringContaining('/catalogs/SENT/')]);

  const text = (await facade.get('/metrics')).text;
  const attempts = samples(text, 'pim_upstream_requests_total');
  const timed = samples(text, 'pim_upstream_request_duration_seconds_count');
  expect(
    attempts.reduce((sum, [, value]) => sum + value, 0),
    JSON.stringify(attempts),
  ).toBe(1);
  expect(
    timed.reduce((sum, [, value]) => sum + value, 0),
    JSON.stringify(timed),
  ).toBe(1);
});

// A call still queued when its client leaves never reached the PIM either.
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

// docs/operations.md, Monitoring: `pim_upstream_retries_total` counts "attempts that repeated a failed attempt", and "a
// call that never left the connection queue (its budget spent there, the breaker opened meanwhile) is no attempt"
// (`pim_upstream_requests_total`). A retry that waited in the queue until its budget ran out never reached the PIM, yet
// it was counted as a retry when the retry step decided on it: under load (the queue full, the PIM failing), exactly
// when an operator reads it, the retry traffic to the PIM looked larger than the attempts that carried it.
// FAILING answers 503 after 200 ms; HOLD is never answered (it keeps the only connection).
const handler: UpstreamHandler = (req, res) => {
  if (req.url?.includes('/HOLD/')) return;
  setTimeout(() => res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":503}'), 200);
};

it('counts no retry that never left the connection queue', async () => {
  const { upstream, facade } = await servers.start(handler, {
    PIM_MAX_CONCURRENCY: '1',
    PIM_CACHE: 'false',
    PIM_RETRIES: '1',
    PIM_RETRY_BASE_MS: '1',
    PIM_TIMEOUT_MS: '60000',
    GRAPHQL_BUDGET_MS: '1500',
    PIM_STALE_IF_ERROR_MS: '0',
  });
  const failing = facade.post('{ catalogProducts(catalogId: "FAILING") }');
  await expect.poll(() => upstream.requests.length).toBe(1);
  // Queued behind FAILING's first attempt: it gets the connection next, before FAILING's retry.
  const held = facade.post('{ catalogProducts(catalogId: "HOLD") }');
  const { body } = await failing;
  expect(body.errors[0].extensions.code).toBe('BUDGET_EXCEEDED');
  await held;
  // FAILING's retry never reached the PIM.
  expect(upstream.requests.map((r) => r.url)).toEqual([
    expect.stringContaining('/FAILING/'),
    expect.stringContaining('/HOLD/'),
  ]);
  const text = (await facade.get('/metrics')).text;
  const failed = samples(text, 'pim_upstream_requests_total').filter(([series]) => series.includes('status="503"'));
  expect(failed.map(([, value]) => value)).toEqual([1]);
  const retries = samples(text, 'pim_upstream_retries_total');
  expect(retries, JSON.stringify(retries)).toEqual([]);
});

// docs/operations.md: "time spent queued is never blamed on the upstream"; the first test of this file:
// "its seconds in the queue are no PIM latency". `pim_upstream_request_duration_seconds` ("Latency of one attempt
// against the PIM REST service") timed each attempt from before it queued for a connection (PIM_MAX_CONCURRENCY):
// with the connections busy, the PIM's latency on the dashboard grew by the façade's own queueing.
const bucket = (text: string, le: string) => {
  const sample = `pim_upstream_request_duration_seconds_bucket{le="${le}",operation="searchProducts",status="2xx"} `;
  const line = text.split('\n').find((l) => l.startsWith(sample));
  return line === undefined ? undefined : Number(line.slice(sample.length));
};

it('times an attempt from when it leaves the connection queue, not from when it joined it', async () => {
  // Every call takes the PIM about 600 ms; one connection, so the later calls wait for the earlier ones first.
  const { upstream, facade } = await servers.start(faults.slowHeaders(600), {
    PIM_MAX_CONCURRENCY: '1',
    PIM_CACHE: 'false',
  });
  const answers = await Promise.all(
    ['A', 'B', 'C'].map((id) => facade.post(`{ catalogProducts(catalogId: "${id}") }`)),
  );
  for (const { body } of answers) expect(body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(3);
  const text = (await facade.get('/metrics')).text;
  // Each attempt took the PIM ~0.6 s: all under 1 s, whatever the ones behind waited in the queue (up to 1.2 s).
  expect(bucket(text, '+Inf')).toBe(3);
  expect(
    bucket(text, '1'),
    text
      .split('\n')
      .filter((l) => l.startsWith('pim_upstream_request_duration_seconds_sum'))
      .join('\n'),
  ).toBe(3);
});
