import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { faults, type UpstreamHandler } from '../helpers/upstream.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { aliasedCalls, countInFlight, postTimed } from '../helpers/burst.ts';

// Fairness inside one credential: every keyless caller shares the server's key, so the queue must
// also be fair between the requests (or client addresses) that use it. Defaults for the pool sizes.

const { startUpstream, startFacade, start } = closedAfterEach();

const SERVER_KEY = 'server-key-0001';
// Every keyless call goes out under the server key; no answer cache, so every call meets the queue.
const keyedUncached = { PIM_API_KEY: SERVER_KEY, PIM_CACHE: 'false' };
// The shape: 2 s upstream calls, bursts of 15-alias operations.
const SLOW_MS = 2_000;
// One upstream call time, with room for a busy machine; the budget (20 s by default) is far above it.
const ONE_CALL = SLOW_MS + 1_000;

const fields = aliasedCalls;

/** Calls whose id starts with "slow" take `ms`, the rest answer at once; counts them in flight by `group`. */
const slowBurst = (group: (req: IncomingMessage) => string | undefined, ms = SLOW_MS) =>
  countInFlight(group, (req, res) =>
    req.url?.includes('/slow') ? faults.slowHeaders(ms)(req, res) : faults.ok(req, res),
  );

describe('fairness inside one credential', () => {
  it("D3: one anonymous client's burst never holds another anonymous client's call for more than one call time", async () => {
    const { upstream, facade } = await start(slowBurst(() => undefined).handler, keyedUncached);
    const burst = new AbortController();
    const noisy = Array.from({ length: 10 }, (_, r) =>
      postTimed(facade.origin, fields(`slow${r}`, 15), {}, burst.signal),
    );
    try {
      // The server key's share of the connections is full of the burst's calls.
      await expect.poll(() => upstream.requests.length).toBeGreaterThanOrEqual(12);
      // Asked as the burst starts, in its middle, and later still.
      for (const pause of [0, 2_500, 3_000]) {
        await sleep(pause);
        const quiet = await postTimed(facade.origin, fields(`fast${pause}`, 1));
        expect(quiet.body.errors).toBeUndefined();
        expect(quiet.ms).toBeLessThan(ONE_CALL);
      }
      expect(upstream.requests.every((r) => r.headers['x-api-key'] === SERVER_KEY)).toBe(true);
    } finally {
      burst.abort();
      await Promise.allSettled(noisy);
    }
  }, 40_000);

  it('D4: made-up Authorization values buy no queue shares; the keyless burst holds one credential share at most', async () => {
    // Grouped by who the PIM authenticates: the server key, whatever Authorization came along.
    const { handler, peaks } = slowBurst((req) => String(req.headers['x-api-key']));
    const { upstream, facade } = await start(handler, keyedUncached);
    const burst = new AbortController();
    const noisy = Array.from({ length: 60 }, (_, r) =>
      postTimed(facade.origin, fields(`slow${r}`, 15), { authorization: `Bearer made-up-${r}` }, burst.signal),
    );
    try {
      await expect.poll(() => upstream.requests.length).toBeGreaterThanOrEqual(12);
      // Let the queue settle into its steady state before the keyed client asks.
      await sleep(500);
      const keyed = await postTimed(facade.origin, fields('keyed', 1), { 'x-api-key': 'own-key-0002' });
      expect(keyed.body.errors).toBeUndefined();
      expect(keyed.ms).toBeLessThan(1_000);
      // Three quarters of 16 connections by default: the rest stay free for other credentials.
      expect(peaks.get(SERVER_KEY)).toBeLessThanOrEqual(12);
      const burstCalls = upstream.requests.filter((r) => r.url.includes('/slow'));
      expect(burstCalls.every((r) => r.headers['x-api-key'] === SERVER_KEY)).toBe(true);
      expect(burstCalls.every((r) => r.headers.authorization?.startsWith('Bearer made-up-'))).toBe(true);
    } finally {
      burst.abort();
      await Promise.allSettled(noisy);
    }
  }, 40_000);

  it('with TRUSTED_CLIENT_IP_HEADER, shares one credential between client addresses instead of requests', async () => {
    // Calls of address A (10 requests) and of address B (one request), each 300 ms, all under the server key.
    const { handler, peaks } = slowBurst((req) => req.url?.match(/classifications\/slow([AB])/)?.[1], 300);
    const upstream = await startUpstream(handler);
    const share = async (env: Record<string, string>, [a, b]: [string, string] = ['10.0.0.1', '10.0.0.2']) => {
      const facade = await startFacade(upstream.url, { ...keyedUncached, ...env });
      const burst = Array.from({ length: 10 }, (_, r) =>
        postTimed(facade.origin, fields(`slowA${r}`, 15), { 'x-real-ip': a }),
      );
      await expect.poll(() => peaks.get('A')).toBe(12);
      const answerB = await postTimed(facade.origin, fields('slowB', 15), { 'x-real-ip': b });
      await Promise.all(burst);
      await facade.close();
      return { b: answerB, peak: peaks.get('B') };
    };
    const byAddress = await share({ TRUSTED_CLIENT_IP_HEADER: 'X-Real-IP' });
    expect(byAddress.b.body.errors).toBeUndefined();
    // Half of the credential's 12 connections: one share of two.
    expect(byAddress.peak).toBeGreaterThanOrEqual(5);
    peaks.clear();
    // Unset, the header is ignored: B's one request is one share of eleven.
    const byRequest = await share({});
    expect(byRequest.peak).toBeLessThanOrEqual(3);
    peaks.clear();
    // No address is that long: such a value is not kept as a share's name (a share per request instead).
    const long = await share({ TRUSTED_CLIENT_IP_HEADER: 'X-Real-IP' }, [
      `${'f'.repeat(4_000)}A`,
      `${'f'.repeat(4_000)}B`,
    ]);
    expect(long.b.body.errors).toBeUndefined();
    expect(long.peak).toBeLessThanOrEqual(3);
  }, 60_000);

  it('still never shares a coalesced call or a cached answer between different forwarded Authorization values', async () => {
    // Names, after 200 ms and cacheable, the last letter of the Authorization it was sent.
    const whoAsked: UpstreamHandler = (req, res) => {
      const body = JSON.stringify({ status: 200, meta: {}, data: [{ who: req.headers.authorization?.at(-1) }] });
      setTimeout(
        () =>
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=60' }).end(body),
        200,
      );
    };
    const { upstream, facade } = await start(whoAsked, { PIM_API_KEY: SERVER_KEY });
    const ask = (token: string) =>
      facade.post('{ classificationGroups(classificationId: "same") }', {}, { authorization: `Bearer ${token}` });
    // At once: the two X calls share one flight; Y gets its own.
    const first = await Promise.all([ask('x'), ask('y'), ask('x')]);
    // Later: each answered from its own cache entry.
    const again = await Promise.all([ask('x'), ask('y')]);
    const who = (answer: { body: any }) => answer.body.data.classificationGroups.data[0].who;
    expect([...first, ...again].map(who)).toEqual(['x', 'y', 'x', 'x', 'y']);
    expect(upstream.requests.map((r) => r.headers.authorization).sort()).toEqual(['Bearer x', 'Bearer y']);
  });
});
