import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { cancellablePost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type RecordedRequest, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 1_000;
const TIMEOUT_MS = 1_000;
const OTHER = { 'x-api-key': 'other-credential' };
const q = (id: string, alias = 'p') => `{ ${alias}: catalogProducts(catalogId: "${id}") }`;

/**
 * A façade whose PIM failed until the breaker opened; past the half-open delay, the trial call (catalog T, its own
 * credential) gets `status` with `Retry-After: <retryAfterS>` once, and every other call is answered. Catalog K was
 * read before by the other credential, and kept. A 503 holds the trial inside the breaker for the Retry-After (its
 * retry waits it out); a 429 is the PIM answering.
 */
async function heldTrial(status: 429 | 503, { retryAfterS = 3, env = {} as Record<string, string> } = {}) {
  let failing = false;
  let held = false;
  const handler: UpstreamHandler = (req, res) => {
    if (failing) return void res.writeHead(500).end();
    if (req.url!.includes('/T/') && !held) {
      held = true;
      return void res.writeHead(status, { 'retry-after': String(retryAfterS) }).end();
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
    ...env,
  });
  expect((await facade.post(q('K'), undefined, OTHER)).body.errors).toBeUndefined();
  failing = true;
  for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
    expect(i).toBeLessThan(20);
    await facade.post(q(`F${i}`));
  }
  failing = false;
  await sleep(HALF_OPEN_MS + 100);
  const trial = facade.post(q('T'), undefined, { 'x-api-key': 'held-credential' });
  await expect.poll(() => upstream.requests.some((r) => r.url.includes('/T/')), { interval: 10 }).toBe(true);
  /** `id` asked by the other credential: what it got and after how long. */
  const ask = async (id: string, alias?: string) => {
    const started = Date.now();
    const { body } = await facade.post(q(id, alias), undefined, OTHER);
    return { body, took: Date.now() - started };
  };
  return { facade, upstream, trial, ask };
}

const sentFor = (upstream: { requests: RecordedRequest[] }, id: string) =>
  upstream.requests.filter((r) => r.url.includes(`/${id}/`));

// docs/operations.md: calls arriving while the trial is out "wait for its outcome, at most PIM_TIMEOUT_MS and never
// past their own budget". They waited for the trial up to their budget: one credential's trial held by a Retry-After
// held every other credential's calls for its whole length.
it('a call arriving while the half-open trial is held waits at most PIM_TIMEOUT_MS, and is never sent late', async () => {
  const { facade, upstream, trial, ask } = await heldTrial(503);
  const { body, took } = await ask('W');
  expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
  expect(took).toBeLessThan(TIMEOUT_MS + 700);
  expect((await trial).body.errors).toBeUndefined();
  // The call that gave up is not sent once the trial is over: nobody would read its answer.
  await sleep(200);
  expect(sentFor(upstream, 'W')).toEqual([]);
  expect(facade.app.upstream.breaker).toBe('closed');
}, 30_000);

it('a call that gave up waiting for the trial is answered by its kept copy, marked stale', async () => {
  const { trial, ask } = await heldTrial(503);
  const { body, took } = await ask('K');
  expect(body.errors).toBeUndefined();
  expect(body.data.p).toBeDefined();
  expect(body.extensions?.stale).toBeDefined();
  expect(took).toBeLessThan(TIMEOUT_MS + 700);
  await trial;
}, 30_000);

// The check that a call which stopped waiting is not sent covered only the give-up: one whose client left went down
// the pipeline once the trial ended, took a connection slot and was counted as an attempt (status ABORTED).
it('a call whose client left while it waited for the trial is not sent, nor counted, once the trial ends', async () => {
  const { facade, upstream, trial } = await heldTrial(503, { retryAfterS: 2 });
  const { left, abort } = cancellablePost(facade.url, q('A'), OTHER);
  await sleep(300);
  abort();
  expect(await left).toBe('cancelled');
  expect((await trial).body.errors).toBeUndefined();
  await sleep(300);
  expect(sentFor(upstream, 'A')).toEqual([]);
  const metrics = (await facade.get('/metrics')).text.split('\n');
  expect(metrics.filter((line) => line.startsWith('pim_upstream_requests_total') && line.includes('ABORTED'))).toEqual(
    [],
  );
}, 30_000);

// The give-up was timed from the arrival of the shared call's first request: one that joined it later got that
// request's UPSTREAM_UNAVAILABLE, though its own wait had time left and the trial ended within it.
it('a request that joined a waiting call late is not failed by that call giving up', async () => {
  const { trial, ask } = await heldTrial(503, { retryAfterS: 2, env: { PIM_TIMEOUT_MS: '1500' } });
  await sleep(300);
  const first = ask('W', 'a');
  await sleep(1_100);
  const joiner = await ask('W', 'b');
  expect(joiner.body.errors).toBeUndefined();
  expect(joiner.body.data.b).toBeDefined();
  await Promise.all([first, trial]);
}, 30_000);

// A throttled trial is the PIM answering: it closes the breaker then, and no call waits for (or fails on) the trial's
// Retry-After; the trial's own caller still waits it out and gets its answer.
it('a throttled trial closes the breaker at once, and its caller is answered after the Retry-After', async () => {
  const { facade, upstream, trial, ask } = await heldTrial(429);
  const { body, took } = await ask('W');
  expect(body.errors).toBeUndefined();
  expect(took).toBeLessThan(TIMEOUT_MS);
  expect(facade.app.upstream.breaker).toBe('closed');
  const answered = await trial;
  expect(answered.body.errors).toBeUndefined();
  const [asked, again] = sentFor(upstream, 'T');
  expect(again!.at - asked!.at).toBeGreaterThanOrEqual(3_000);
}, 30_000);
