import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { faults, type UpstreamHandler } from '../helpers/upstream.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { aliasedCalls, countInFlight, postTimed } from '../helpers/burst.ts';

const servers = closedAfterEach();
/** An upstream answering with `handler` and a façade with `env`, no answer cache: every call meets the queue. */
const start = (handler: UpstreamHandler, env: Record<string, string>) =>
  servers.start(handler, { PIM_CACHE: 'false', ...env });

const fields = aliasedCalls;
const post = async (url: string, query: string, key?: string, signal?: AbortSignal) =>
  (await postTimed(url, query, key ? { 'x-api-key': key } : {}, signal)).body;

const codes = (body: Awaited<ReturnType<typeof post>>) => [...new Set(body.errors?.map((e) => e.extensions.code))];

/** Answers key A after `ms` once `slow()` says so, everyone else at once. */
const slowFor =
  (key: string, ms: number, slow: () => boolean): UpstreamHandler =>
  (req, res) =>
    slow() && req.headers['x-api-key'] === key ? faults.slowHeaders(ms)(req, res) : faults.ok(req, res);

/**
 * The PIM has answered each key once: each is then a credential of its own. Before, every key it has not accepted
 * waits in one share, made-up ones with them (test/hardening/fair-made-up-keys-queue.test.ts).
 */
const known = (url: string, keys: string[]) =>
  Promise.all(keys.map((key) => post(url, fields(`known-${key}`, 1), key)));

describe('one credential cannot starve the others', () => {
  it("answers key B within 2 s while key A's burst fills the queue; the breaker stays closed, readiness 200", async () => {
    let slow = false;
    const { facade } = await start(
      slowFor('A', 3_000, () => slow),
      { PIM_TIMEOUT_MS: '4000', GRAPHQL_BUDGET_MS: '8000', READINESS_MAX_AGE_MS: '500' },
    );
    const url = facade.origin;
    await known(url, ['A', 'B']);
    slow = true;
    const burst = new AbortController();
    const a = Array.from({ length: 10 }, (_, r) => post(url, fields(`A${r}`, 15), 'A', burst.signal));
    const readiness: number[] = [];
    const sampling = (async () => {
      for (let t = 0; t < 36; t++) {
        readiness.push((await fetch(`${url}/readiness`)).status);
        await sleep(250);
      }
    })();
    try {
      // B asks early, mid-burst and as A's budgets run out.
      for (const pause of [1_000, 4_000, 3_500]) {
        await sleep(pause);
        const started = Date.now();
        const b = await post(url, fields(`B${pause}`, 3), 'B');
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(b.errors).toBeUndefined();
        expect(facade.app.upstream.breaker).toBe('closed');
      }
      await sampling;
      expect(readiness.every((status) => status === 200)).toBe(true);
      // A's fields either answered or ran out of their own budget while queued; none blamed the upstream.
      const aCodes = new Set((await Promise.all(a)).flatMap(codes));
      expect([...aCodes].filter((code) => code !== 'BUDGET_EXCEEDED')).toEqual([]);
      expect(facade.app.upstream.breaker).toBe('closed');
    } finally {
      burst.abort();
      await Promise.allSettled([...a, sampling]);
    }
  }, 20_000);

  it('holds each credential to its share of the connections, while several credentials use them all', async () => {
    const calls = countInFlight((req) => String(req.headers['x-api-key']), faults.slowHeaders(100));
    const { facade } = await start(calls.handler, {
      PIM_MAX_CONCURRENCY: '4',
      PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '2',
    });
    await known(facade.origin, ['K1', 'K2']);
    calls.peaks.clear();
    const bodies = await Promise.all(['K1', 'K2'].map((key) => post(facade.origin, fields(key, 6), key)));
    expect(bodies.flatMap(codes)).toEqual([]);
    expect(Object.fromEntries(calls.peaks)).toEqual({ K1: 2, K2: 2 });
    expect(calls.peak).toBe(4);
  });

  it('a budget spent in the queue is BUDGET_EXCEEDED, not retried, and does not open the breaker', async () => {
    const { upstream, facade } = await start(faults.slowHeaders(1_500), {
      PIM_MAX_CONCURRENCY: '1',
      PIM_TIMEOUT_MS: '5000',
      GRAPHQL_BUDGET_MS: '800',
      PIM_BREAKER_THRESHOLD: '2',
    });
    const body = await post(facade.origin, fields('Q', 4));
    expect(body.errors?.map((e) => e.extensions.code)).toEqual(Array(4).fill('BUDGET_EXCEEDED'));
    // Only the first call left the queue; the budget cut it short, so it is no upstream fault either.
    expect(upstream.requests).toHaveLength(1);
    expect(facade.app.upstream.breaker).toBe('closed');
  });

  it('requests in flight during a graceful shutdown do not time out in the queue', async () => {
    const { upstream, facade } = await start(faults.slowHeaders(200), {
      PIM_MAX_CONCURRENCY: '4',
      PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '4',
      PIM_TIMEOUT_MS: '600',
      SHUTDOWN_GRACE_MS: '10000',
    });
    const inFlight = Array.from({ length: 24 }, (_, i) => post(facade.origin, fields(`S${i}`, 1)));
    // A second wave has been sent: every request has reached the server and most wait in the queue.
    await expect.poll(() => upstream.requests.length).toBeGreaterThanOrEqual(8);
    const shutdown = facade.close();
    const bodies = await Promise.all(inFlight);
    await shutdown;
    expect(bodies.flatMap(codes)).toEqual([]);
    expect(upstream.requests).toHaveLength(24);
  });
});
