import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

// docs/operations.md, Monitoring: `pim_upstream_retries_total` counts "attempts that repeated a failed attempt", and "a
// call that never left the connection queue (its budget spent there, the breaker opened meanwhile) is no attempt"
// (`pim_upstream_requests_total`). A retry that waited in the queue until its budget ran out never reached the PIM, yet
// it was counted as a retry when the retry step decided on it: under load (the queue full, the PIM failing), exactly
// when an operator reads it, the retry traffic to the PIM looked larger than the attempts that carried it.
const servers = closedAfterEach();

const samples = (text: string, name: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))] as const);

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
