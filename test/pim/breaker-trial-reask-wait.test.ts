import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type RecordedRequest } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 1_000;
const TIMEOUT_MS = 1_000;
const HELD = { 'x-api-key': 'held-credential' };
const OTHER = { 'x-api-key': 'other-credential' };
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const sentFor = (upstream: { requests: RecordedRequest[] }, id: string) =>
  upstream.requests.filter((r) => r.url.includes(`/${id}/`));

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
