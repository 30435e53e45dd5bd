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

type Respond = (req: IncomingMessage, res: ServerResponse) => boolean;

/** As in test/pim/breaker-trial-throttled.test.ts: the breaker opened, then (past the half-open delay) `respond`. */
async function halfOpen(respond: Respond, env: Record<string, string> = {}) {
  let phase: 'failing' | 'half-open' = 'failing';
  const { facade, upstream } = await servers.start(
    (req, res) => {
      if (phase === 'failing') return void res.writeHead(500).end();
      if (respond(req, res)) return;
      echo(req, res);
    },
    {
      PIM_BREAKER_THRESHOLD: '2',
      PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
      PIM_TIMEOUT_MS: String(TIMEOUT_MS),
      PIM_RETRY_BASE_MS: '20',
      PIM_CACHE: 'false',
      GRAPHQL_BUDGET_MS: '10000',
      ...env,
    },
  );
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
    const controller = new AbortController();
    const left = fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...HELD },
      body: JSON.stringify({ query: q('T') }),
      signal: controller.signal,
    }).catch(() => 'cancelled');
    await expect.poll(() => sentFor(upstream, 'T').length, { interval: 10 }).toBe(1);
    await sleep(200);
    expect(facade.app.upstream.breaker).toBe('closed');
    controller.abort();
    expect(await left).toBe('cancelled');
    await sleep(2_500);
    expect(sentFor(upstream, 'T')).toHaveLength(1);
  },
  30_000,
);
