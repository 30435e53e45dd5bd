import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type RecordedRequest } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 1_000;
const TIMEOUT_MS = 1_000;
const HELD = { 'x-api-key': 'held-credential' };
const OTHER = { 'x-api-key': 'other-credential' };
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

/** Decides one upstream call once the breaker is half-open: true when it answered it. */
type Respond = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * A façade whose PIM failed until the breaker opened, then (past the half-open delay) answers with `respond`,
 * else echoes. `warm` are read first (and kept) with the held credential.
 */
async function halfOpen(respond: Respond, env: Record<string, string> = {}, warm: string[] = []) {
  let phase: 'warm' | 'failing' | 'half-open' = 'warm';
  const { facade, upstream } = await servers.start(
    (req, res) => {
      if (phase === 'failing') return void res.writeHead(500).end();
      if (phase === 'half-open' && respond(req, res)) return;
      echo(req, res);
    },
    {
      PIM_BREAKER_THRESHOLD: '2',
      PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
      PIM_TIMEOUT_MS: String(TIMEOUT_MS),
      PIM_RETRIES: '1',
      PIM_CACHE: 'false',
      GRAPHQL_BUDGET_MS: '10000',
      ...env,
    },
  );
  for (const id of warm) expect((await facade.post(q(id), undefined, HELD)).body.errors).toBeUndefined();
  phase = 'failing';
  for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
    expect(i).toBeLessThan(20);
    await facade.post(q(`F${i}`), undefined, OTHER);
  }
  phase = 'half-open';
  await sleep(HALF_OPEN_MS + 100);
  return { facade, upstream };
}

const sentFor = (upstream: { requests: RecordedRequest[] }, id: string) =>
  upstream.requests.filter((r) => r.url.includes(`/${id}/`));

const retries = async (facade: { get(path: string): Promise<{ text: string }> }) =>
  (await facade.get('/metrics')).text
    .split('\n')
    .filter((line) => line.startsWith('pim_upstream_retries_total'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);

const timed = async <T>(work: Promise<T>) => {
  const started = Date.now();
  const value = await work;
  return { value, took: Date.now() - started };
};

// docs/operations.md: a 429 is "returned at once ... when this instance keeps a last good answer that can stand in
// (served at once, marked stale)". The stale step marks the call standIn and the retry step throws at once, but the
// breaker, seeing its trial throttled, sleeps the Retry-After itself and asks again, whatever standIn says.
it('a throttled trial whose request has a kept copy is answered by that copy at once', async () => {
  let throttled = false;
  const { facade } = await halfOpen(
    (req, res) => {
      if (!req.url!.includes('/T/') || throttled) return false;
      throttled = true;
      res.writeHead(429, { 'retry-after': '3' }).end();
      return true;
    },
    {},
    ['T'],
  );
  const { value, took } = await timed(facade.post(q('T'), undefined, HELD));
  expect(value.body.errors).toBeUndefined();
  expect(value.body.extensions?.stale).toBeDefined();
  expect(took).toBeLessThan(1_500);
}, 30_000);

// PIM_RETRIES=1: a GET is sent at most twice. The trial's caller re-asks outside the retry step, which then starts a
// fresh sequence of its own: a trial throttled twice is sent three times.
it('a throttled trial is sent no more than PIM_RETRIES + 1 times', async () => {
  let throttled = 0;
  const { facade, upstream } = await halfOpen((req, res) => {
    if (!req.url!.includes('/T/') || throttled >= 2) return false;
    throttled += 1;
    res.writeHead(429, { 'retry-after': '1' }).end();
    return true;
  });
  await facade.post(q('T'), undefined, HELD);
  expect(sentFor(upstream, 'T').length).toBeLessThanOrEqual(2);
}, 30_000);

// The re-ask is a second send of the same GET, as the retry step's would have been, but onRetry is told only of the
// retry step's own attempts past its first: pim_upstream_retries_total misses it.
it("the trial caller's re-ask counts in pim_upstream_retries_total", async () => {
  let throttled = false;
  const { facade, upstream } = await halfOpen((req, res) => {
    if (!req.url!.includes('/T/') || throttled) return false;
    throttled = true;
    res.writeHead(429, { 'retry-after': '1' }).end();
    return true;
  });
  const before = await retries(facade);
  const answered = await facade.post(q('T'), undefined, HELD);
  expect(answered.body.errors).toBeUndefined();
  expect(sentFor(upstream, 'T')).toHaveLength(2);
  expect((await retries(facade)) - before).toBe(1);
}, 30_000);

// A trial that proves nothing (its client left) hands the trial to the probe, sent past the breaker with no `trial`
// mark: the PIM throttling it with a Retry-After holds the half-open breaker, and every call arriving meanwhile,
// for the whole Retry-After, as e4e1cd7 says a throttled trial must not.
it('a throttled probe standing trial closes the breaker at once too', async () => {
  let probeThrottled = false;
  const { facade, upstream } = await halfOpen((req, res) => {
    if (req.url!.includes('/T/')) {
      setTimeout(() => !res.destroyed && echo(req, res), 1_000);
      return true;
    }
    if (req.url!.includes('readiness-probe') && !probeThrottled) {
      probeThrottled = true;
      res.writeHead(429, { 'retry-after': '2' }).end();
      return true;
    }
    return false;
  });
  const controller = new AbortController();
  const left = fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...HELD },
    body: JSON.stringify({ query: q('T') }),
    signal: controller.signal,
  }).catch(() => 'cancelled');
  await expect.poll(() => sentFor(upstream, 'T').length, { interval: 10 }).toBe(1);
  controller.abort();
  expect(await left).toBe('cancelled');
  await expect.poll(() => probeThrottled, { interval: 10 }).toBe(true);
  const { value, took } = await timed(facade.post(q('W'), undefined, OTHER));
  expect(value.body.errors).toBeUndefined();
  expect(took).toBeLessThan(TIMEOUT_MS);
}, 30_000);
