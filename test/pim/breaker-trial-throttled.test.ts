import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { cancellablePost } from '../helpers/burst.ts';
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
      PIM_RETRY_BASE_MS: '20',
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
  const { left, abort } = cancellablePost(facade.url, q('T'), HELD);
  await expect.poll(() => sentFor(upstream, 'T').length, { interval: 10 }).toBe(1);
  abort();
  expect(await left).toBe('cancelled');
  await expect.poll(() => probeThrottled, { interval: 10 }).toBe(true);
  const { value, took } = await timed(facade.post(q('W'), undefined, OTHER));
  expect(value.body.errors).toBeUndefined();
  expect(took).toBeLessThan(TIMEOUT_MS);
}, 30_000);

// PIM_RETRIES=2: a GET is sent at most three times, retried at most twice. The trial's first attempt is a 503
// (retried), its second a 429 (thrown at once, the trial): the breaker re-asks with attemptsMade: 1 whatever
// attempt the 429 came at, so the retry step runs attempts 1 and 2 again: four sends, three retries counted.
it('a trial throttled at its second attempt is sent no more than PIM_RETRIES + 1 times', async () => {
  const seen: number[] = [];
  const { facade, upstream } = await halfOpen(
    (req, res) => {
      if (!req.url!.includes('/T/')) return false;
      const n = sentFor(upstream, 'T').length; // this request already recorded
      seen.push(n);
      if (n === 2) res.writeHead(429, { 'retry-after': '1' }).end();
      else res.writeHead(503).end();
      return true;
    },
    { PIM_RETRIES: '2' },
  );
  const before = await retries(facade);
  const answered = await facade.post(q('T'), undefined, HELD);
  expect(answered.body.errors).toBeDefined();
  const counted = (await retries(facade)) - before;
  expect({ sends: sentFor(upstream, 'T').length, counted }).toEqual({ sends: 3, counted: 2 });
}, 30_000);

// PIM_RETRIES=0: no GET is ever sent twice, the throttled trial's neither.
it('a throttled trial with PIM_RETRIES=0 is sent once', async () => {
  const { facade, upstream } = await halfOpen(
    (req, res) => {
      if (!req.url!.includes('/T/')) return false;
      res.writeHead(429, { 'retry-after': '1' }).end();
      return true;
    },
    { PIM_RETRIES: '0' },
  );
  const answered = await facade.post(q('T'), undefined, HELD);
  expect(answered.body.errors?.[0]?.extensions?.code).toBeDefined();
  expect(sentFor(upstream, 'T')).toHaveLength(1);
  expect(facade.app.upstream.breaker).toBe('closed');
}, 30_000);

// The 429 trial closes the breaker; its re-ask failing with a 5xx is one fault of a closed breaker (threshold 2).
it('a throttled trial whose re-ask fails with a 503 leaves the breaker closed, one fault counted', async () => {
  const { facade, upstream } = await halfOpen(
    (req, res) => {
      if (!req.url!.includes('/T/')) return false;
      const n = sentFor(upstream, 'T').length;
      if (n === 1) res.writeHead(429, { 'retry-after': '1' }).end();
      else res.writeHead(503).end();
      return true;
    },
    { PIM_RETRIES: '1' },
  );
  const answered = await facade.post(q('T'), undefined, HELD);
  expect(answered.body.errors).toBeDefined();
  expect(sentFor(upstream, 'T')).toHaveLength(2);
  expect(facade.app.upstream.breaker).toBe('closed');
  // Another call goes through.
  expect((await facade.post(q('W'), undefined, OTHER)).body.errors).toBeUndefined();
}, 30_000);

// The trial caller's client leaves while its caller sleeps the Retry-After: nothing is sent for nobody.
it.each([['true'], ['false']])(
  'PIM_COALESCE=%s: a throttled trial whose client left is not asked again',
  async (coalesce) => {
    const { facade, upstream } = await halfOpen(
      (req, res) => {
        if (!req.url!.includes('/T/')) return false;
        if (sentFor(upstream, 'T').length === 1) res.writeHead(429, { 'retry-after': '2' }).end();
        else echo(req, res);
        return true;
      },
      { PIM_RETRIES: '2', PIM_COALESCE: coalesce },
    );
    const { left, abort } = cancellablePost(facade.url, q('T'), HELD);
    await expect.poll(() => sentFor(upstream, 'T').length, { interval: 10 }).toBe(1);
    await sleep(200);
    expect(facade.app.upstream.breaker).toBe('closed');
    abort();
    expect(await left).toBe('cancelled');
    await sleep(2_500);
    expect(sentFor(upstream, 'T')).toHaveLength(1);
  },
  30_000,
);

async function openBreaker(facade: { app: { upstream: { breaker: string } }; post: Function }, tag: string) {
  for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
    expect(i).toBeLessThan(20);
    await facade.post(q(`${tag}${i}`), undefined, OTHER);
  }
}

// A call arriving while the breaker is half-open waits for the trial at most PIM_TIMEOUT_MS (leaving() in
// breaker.ts). The throttled trial's caller re-asks through decideOnce directly, past decide() and its leaving():
// when the breaker has opened and gone half-open again during its Retry-After, the re-ask waits for that other
// trial for as long as the trial lasts (here a 503 whose Retry-After it sleeps out), bound only by the budget.
it("a throttled trial's re-ask arriving while half-open waits for the trial no longer than PIM_TIMEOUT_MS", async () => {
  let failing = true;
  const { facade, upstream } = await servers.start(
    (req, res) => {
      if (req.url!.includes('/T/')) {
        if (sentFor(upstream, 'T').length === 1) return void res.writeHead(429, { 'retry-after': '3' }).end();
        return echo(req, res);
      }
      if (req.url!.includes('/S/')) {
        if (sentFor(upstream, 'S').length === 1) return void res.writeHead(503, { 'retry-after': '4' }).end();
        return echo(req, res);
      }
      if (failing) return void res.writeHead(500).end();
      echo(req, res);
    },
    {
      PIM_BREAKER_THRESHOLD: '2',
      PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
      PIM_TIMEOUT_MS: String(TIMEOUT_MS),
      PIM_RETRIES: '2',
      PIM_CACHE: 'false',
      GRAPHQL_BUDGET_MS: '15000',
    },
  );
  await openBreaker(facade, 'F');
  failing = false;
  await sleep(HALF_OPEN_MS + 100);
  // T is the trial; throttled, it closes the breaker, and its caller sleeps 3 s.
  const t0 = Date.now();
  const t = facade.post(q('T'), undefined, HELD).then((answer) => ({ answer, took: Date.now() - t0 }));
  await expect.poll(() => sentFor(upstream, 'T').length, { interval: 10 }).toBe(1);
  await expect.poll(() => facade.app.upstream.breaker, { interval: 10 }).toBe('closed');
  // Meanwhile the PIM fails again: the breaker opens, and half-opens with S as its trial (a 503 slept out 4 s).
  failing = true;
  await openBreaker(facade, 'G');
  failing = false;
  await sleep(HALF_OPEN_MS + 100);
  const s = facade.post(q('S'), undefined, OTHER);
  await expect.poll(() => sentFor(upstream, 'S').length, { interval: 10 }).toBe(1);
  expect(Date.now() - t0).toBeLessThan(3_000);
  const { took } = await t;
  await s;
  // Re-asked at ~3 s into a half-open breaker: it leaves by ~4 s (PIM_TIMEOUT_MS), not when S's trial ends.
  expect(took).toBeLessThan(3_000 + TIMEOUT_MS + 700);
}, 30_000);

// docs/operations.md, Shutdown: a call waiting to retry fails as the grace is about to end, with the failure it waited
// on. The throttled trial's caller waits out the Retry-After in the breaker, not the retry step: it is let go too.
it('a throttled trial waiting out its Retry-After is answered before the shutdown grace ends', async () => {
  const { facade, upstream } = await halfOpen(
    (req, res) => {
      if (!req.url!.includes('/T/')) return false;
      res.writeHead(429, { 'retry-after': '8' }).end();
      return true;
    },
    { SHUTDOWN_GRACE_MS: '4000' },
  );
  const answer = facade.post(q('T'), undefined, HELD).then(
    ({ status, body }) => ({ status, body }),
    () => 'cut',
  );
  await expect.poll(() => sentFor(upstream, 'T').length).toBe(1);
  await facade.close();
  expect(await answer).toMatchObject({
    status: 200,
    body: { errors: [{ extensions: { code: 'UPSTREAM_RATE_LIMITED' } }] },
  });
  expect(sentFor(upstream, 'T')).toHaveLength(1);
}, 30_000);
