// @module-tag redis-server
import { afterEach, describe, expect, it } from 'vitest';
import { sha256 } from '../ecosystem/persisted-client.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { startRedis } from '../helpers/redis.ts';
import { cacheableEcho, startUpstream, type Upstream } from '../helpers/upstream.ts';

const BUDGET_MS = 3_000;
// How long Redis stays stopped, as issue 15 asks: many lookups time out one after another.
const FROZEN_MS = 20_000;

let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
let upstream: Upstream | undefined;
let facade: Facade | undefined;
afterEach(async () => {
  await facade?.close();
  await upstream?.close();
  await redis?.stop();
  redis = upstream = facade = undefined;
});

/** Sends `send` and returns its answer with the time it took; gives up after 8 s so the test never hangs. */
async function timed<T>(send: (signal: AbortSignal) => Promise<T>) {
  const started = Date.now();
  const answer = await send(AbortSignal.timeout(8_000)).catch((error: Error) => error);
  return { answer, ms: Date.now() - started };
}

const query = (id: string) => `{ catalogProducts(catalogId: "${id}") }`;
const post = (id: string, signal: AbortSignal) =>
  fetch(`${facade!.url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: query(id) }),
    signal,
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

describe('REDIS_URL with Redis frozen (SIGSTOP), as a partition that drops packets looks', () => {
  it('answers queries, APQ and /readiness well within their budgets, then uses the cache again', async () => {
    redis = await startRedis();
    upstream = await startUpstream(cacheableEcho(60));
    const { logger, lines } = captureLogs('warn');
    facade = await startFacade(
      upstream.url,
      {
        REDIS_URL: redis.url,
        GRAPHQL_BUDGET_MS: String(BUDGET_MS),
        PIM_TIMEOUT_MS: '2000',
        READINESS_MAX_AGE_MS: '100',
      },
      { logger },
    );
    expect((await facade.post(query('warm'))).body.errors).toBeUndefined();
    await expect.poll(() => redis!.client.dbsize()).toBeGreaterThan(0);

    redis.freeze();
    const frozenUntil = Date.now() + FROZEN_MS;
    const slowest = { query: 0, cached: 0, readiness: 0, apq: 0 };
    const queryTimes: number[] = [];
    for (let i = 0; Date.now() < frozenUntil; i++) {
      const fresh = await timed((signal) => post(`new-${i}`, signal));
      expect(fresh.answer).toMatchObject({ status: 200, body: { data: { catalogProducts: expect.anything() } } });
      const cached = await timed((signal) => post('warm', signal));
      expect(cached.answer).toMatchObject({ status: 200 });
      const ready = await timed((signal) => fetch(`${facade!.origin}/readiness`, { signal }));
      expect((ready.answer as Response).status).toBe(200);
      // APQ: the registration is executed whatever Redis does, and a lookup that times out is "not found".
      const document = `query Frozen${i} { __typename }`;
      const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(document) } };
      const apq = await timed(async (signal) => {
        const registered = await facade!.postBody({ query: document, extensions });
        const byHash = await fetch(`${facade!.url}?extensions=${encodeURIComponent(JSON.stringify(extensions))}`, {
          signal,
        });
        return { registered: registered.status, byHash: byHash.status };
      });
      expect(apq.answer).toMatchObject({ registered: 200 });
      queryTimes.push(fresh.ms);
      slowest.query = Math.max(slowest.query, fresh.ms);
      slowest.cached = Math.max(slowest.cached, cached.ms);
      slowest.readiness = Math.max(slowest.readiness, ready.ms);
      slowest.apq = Math.max(slowest.apq, apq.ms);
    }
    const median = queryTimes.sort((a, b) => a - b)[queryTimes.length >> 1];
    console.info(
      'while Redis was frozen (ms): slowest',
      slowest,
      'median new-id query',
      median,
      'of',
      queryTimes.length,
    );
    // Well under the 3 s budget and the 2 s probe timeout: a miss costs one short Redis bound.
    expect(slowest.query).toBeLessThan(BUDGET_MS / 2);
    expect(slowest.cached).toBeLessThan(BUDGET_MS / 2);
    expect(slowest.readiness).toBeLessThan(1_000);
    expect(slowest.apq).toBeLessThan(BUDGET_MS / 2);

    // Logged at warn at most once per 10 s per store (cache, APQ), not once per command; every failure is counted.
    const redisLines = lines.filter((l) => /Redis|cache failed|document store failed/i.test(l.msg));
    expect(redisLines.length).toBeGreaterThan(0);
    expect(redisLines.length).toBeLessThanOrEqual(2 * (1 + Math.ceil(FROZEN_MS / 10_000)));
    const metrics = (await facade.get('/metrics')).text;
    const failures = [...metrics.matchAll(/^redis_command_failures_total\{[^}]*\} (\d+)/gm)].map((m) => Number(m[1]));
    expect(failures.reduce((a, b) => a + b, 0)).toBeGreaterThan(redisLines.length);

    redis.thaw();
    // Once Redis runs again, answers are stored and found there again, with no restart. A second
    // instance shares nothing in process with the first: only Redis can answer it.
    const other = await startFacade(upstream.url, { REDIS_URL: redis.url });
    try {
      await expect
        .poll(
          async () => {
            const id = `after-${Date.now()}`;
            await facade!.post(query(id));
            const calls = upstream!.requests.length;
            // The write follows the answer; give it a moment rather than race it.
            await new Promise((resolve) => setTimeout(resolve, 50));
            await other.post(query(id));
            return upstream!.requests.length === calls;
          },
          { timeout: 10_000, interval: 200 },
        )
        .toBe(true);
    } finally {
      await other.close();
    }
  }, 60_000);
});
