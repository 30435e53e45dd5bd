import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { aliasedCalls, countInFlight, postTimed } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

// The door (HTTP_MAX_IN_FLIGHT_PER_CREDENTIAL) and the byte share (PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL) count every
// key the PIM has not been seen to accept in one share, so made-up keys cannot take what real credentials need. The
// connection queue does not: each made-up X-API-KEY is a partition of its own, "nothing in flight", ahead in turn of a
// real credential that asks after them. A PIM that takes a while to answer its 401 (an auth backend behind it, load)
// then has every connection held by keys it refuses, and a real credential's single call waits for all of them.

const { start } = closedAfterEach();

const REAL = 'real-key-0001-abcdef';
// The PIM's 401 to a key it does not know comes after this long (its identity backend); a real key is answered at once.
const REFUSAL_MS = 1_000;

it('made-up X-API-KEYs, one per request, do not take the whole connection pool ahead of a real credential', async () => {
  const open = new Set<ServerResponse>();
  const counted = countInFlight(
    (req) => (req.headers['x-api-key'] === REAL ? undefined : 'made-up'),
    (req, res) => {
      if (req.headers['x-api-key'] === REAL) return echo(req, res);
      open.add(res);
      const timer = setTimeout(
        () =>
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"status":401,"meta":{},"error":"bad key"}'),
        REFUSAL_MS,
      );
      res.once('close', () => (clearTimeout(timer), open.delete(res)));
    },
  );
  const { upstream, facade } = await start(counted.handler, {
    PIM_CACHE: 'false',
    PIM_RETRIES: '0',
    GRAPHQL_BUDGET_MS: '5000',
  });
  // The real key is known: the PIM answered it.
  const first = await postTimed(facade.origin, '{ classificationGroups(classificationId: "warm") }', {
    'x-api-key': REAL,
  });
  expect(first.body.errors).toBeUndefined();

  // 128 requests, each with a key of its own the PIM will refuse (a 401 after a second each).
  const burst = new AbortController();
  const noisy = Array.from({ length: 128 }, (_, i) =>
    postTimed(
      facade.origin,
      `{ classificationGroups(classificationId: "attack-${i}") }`,
      { 'x-api-key': `made-up-${i}-${'k'.repeat(12)}` },
      burst.signal,
    ).catch(() => undefined),
  );
  try {
    await expect.poll(() => upstream.requests.length).toBeGreaterThanOrEqual(12);
    // Every made-up request is in: some at the PIM (all 16 connections before the made-up keys shared one share), the
    // rest waiting for a connection.
    const queued = async () =>
      Number(/^pim_upstream_calls_queued (\d+)/m.exec((await facade.get('/metrics')).text)?.[1]);
    await expect.poll(queued, { timeout: 5_000 }).toBeGreaterThanOrEqual(100);
    const real = await postTimed(facade.origin, '{ classificationGroups(classificationId: "real") }', {
      'x-api-key': REAL,
    });
    // Keys the PIM never accepted held more than one credential's share (12 of 16) of the connections between them.
    const peakMadeUp = counted.peaks.get('made-up');
    expect(
      real.body.errors?.map((e) => e.extensions.code),
      `real credential answered in ${real.ms} ms`,
    ).toBeUndefined();
    expect(real.ms).toBeLessThan(REFUSAL_MS + 1_500);
    expect(peakMadeUp).toBeLessThanOrEqual(12);
  } finally {
    burst.abort();
    await Promise.allSettled(noisy);
  }
}, 30_000);

// The price: a key the PIM has not answered yet waits with the made-up ones. Inside their one share each key is a share
// of its own, so a new key's first call waits for one call time at most, not for another new key's whole burst.
it("a new key's first call waits one call time at most behind another new key's burst", async () => {
  const CALL_MS = 1_000;
  const { upstream, facade } = await start(
    (req, res) =>
      req.headers['x-api-key'] === 'new-b' ? echo(req, res) : void setTimeout(() => echo(req, res), CALL_MS),
    { PIM_CACHE: 'false', PIM_RETRIES: '0', GRAPHQL_BUDGET_MS: '10000' },
  );
  const burst = new AbortController();
  // 40 requests of one field each: 40 calls of a second, four rounds of the 12 connections one share may hold. Each a
  // share of its own, the 28 waiting would each tie with the new key's first call, and most go before it.
  const a = Array.from({ length: 40 }, (_, r) =>
    postTimed(facade.origin, aliasedCalls(`A${r}`, 1), { 'x-api-key': 'new-a' }, burst.signal).catch(() => undefined),
  );
  try {
    await expect.poll(() => upstream.requests.length).toBeGreaterThanOrEqual(12);
    const b = await postTimed(facade.origin, '{ classificationGroups(classificationId: "b") }', {
      'x-api-key': 'new-b',
    });
    expect(b.body.errors).toBeUndefined();
    expect(b.ms).toBeLessThan(CALL_MS + 1_000);
  } finally {
    burst.abort();
    await Promise.allSettled(a);
  }
}, 20_000);
