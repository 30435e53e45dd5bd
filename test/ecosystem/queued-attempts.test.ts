import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

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
