import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 1_000;
const TIMEOUT_MS = 1_000;
const RETRY_AFTER_S = 3;
const OTHER = { 'x-api-key': 'other-credential' };
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

/**
 * A façade whose PIM failed until the breaker opened, then, past the half-open delay, throttles the trial call
 * (catalog T) with `Retry-After: 3` once and answers every other call. Catalog K was read before by the other credential, and kept.
 */
async function heldTrial() {
  let failing = false;
  let throttled = false;
  const handler: UpstreamHandler = (req, res) => {
    if (failing) return void res.writeHead(500).end();
    if (req.url!.includes('/T/') && !throttled) {
      throttled = true;
      return void res.writeHead(429, { 'retry-after': String(RETRY_AFTER_S) }).end();
    }
    echo(req, res);
  };
  const { facade, upstream } = await servers.start(handler, {
    PIM_BREAKER_THRESHOLD: '2',
    PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
    PIM_TIMEOUT_MS: String(TIMEOUT_MS),
    PIM_RETRIES: '1',
    PIM_CACHE: 'false',
    GRAPHQL_BUDGET_MS: '10000',
  });
  expect((await facade.post(q('K'), undefined, OTHER)).body.errors).toBeUndefined();
  failing = true;
  for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
    expect(i).toBeLessThan(20);
    await facade.post(q(`F${i}`));
  }
  failing = false;
  await sleep(HALF_OPEN_MS + 100);
  // The trial: its credential is throttled, and its retry waits the Retry-After (the budget has room for it).
  const trial = facade.post(q('T'), undefined, { 'x-api-key': 'throttled-credential' });
  await expect.poll(() => upstream.requests.some((r) => r.url.includes('/T/'))).toBe(true);
  return { facade, upstream, trial };
}

/** `id` asked while the trial is held: what it got and after how long. */
async function waiter(facade: Awaited<ReturnType<typeof heldTrial>>['facade'], id: string) {
  const started = Date.now();
  const { body } = await facade.post(q(id), undefined, OTHER);
  return { body, took: Date.now() - started };
}

// docs/operations.md: calls arriving while the trial is out "wait for its outcome, at most PIM_TIMEOUT_MS and never
// past their own budget". They waited for the trial up to their budget: one throttled credential's Retry-After held
// every other credential's calls for its whole length.
it('a call arriving while the half-open trial is held waits at most PIM_TIMEOUT_MS, and is never sent late', async () => {
  const { facade, upstream, trial } = await heldTrial();
  const { body, took } = await waiter(facade, 'W');
  expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
  expect(took).toBeLessThan(TIMEOUT_MS + 700);
  expect((await trial).body.errors).toBeUndefined();
  // The call that gave up is not sent once the trial is over: nobody would read its answer.
  await sleep(200);
  expect(upstream.requests.filter((r) => r.url.includes('/W/'))).toEqual([]);
  expect(facade.app.upstream.breaker).toBe('closed');
}, 30_000);

it('a call that gave up waiting for the trial is answered by its kept copy, marked stale', async () => {
  const { facade, trial } = await heldTrial();
  const { body, took } = await waiter(facade, 'K');
  expect(body.errors).toBeUndefined();
  expect(body.data.p).toBeDefined();
  expect(body.extensions?.stale).toBeDefined();
  expect(took).toBeLessThan(TIMEOUT_MS + 700);
  await trial;
}, 30_000);
