// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, SLOW_REDIS_OK, untilConnected } from '../helpers/redis.ts';

// A PIM that answers `max-age=N` with an ETag, and 304 (with its Cache-Control, as RFC 9111 §4.1 asks a 304 to repeat)
// when If-None-Match matches. The HTTP cache stores the answer for revalidation; every call after the first must
// revalidate it with If-None-Match, never download the whole body again. undici's cache interceptor deleted the stored
// entry on every 304 that carried a Cache-Control: the next call went out unconditional: `-, "v1", -, "v1", …`.
const servers = closedAfterEach();
const pim = (maxAge: number, headers304: Record<string, string>) => (req: IncomingMessage, res: ServerResponse) => {
  if (req.headers['if-none-match'] === '"v1"') return void res.writeHead(304, { etag: '"v1"', ...headers304 }).end();
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': `max-age=${maxAge}`, etag: '"v1"' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

const key = { 'x-api-key': 'alice-key' };
const calls = 6;

async function ifNoneMatchSeen(
  maxAge: number,
  headers304: Record<string, string>,
  env: Record<string, string>,
  waitMs = 0,
  ready?: () => Promise<unknown>,
) {
  const { upstream, facade } = await servers.start(pim(maxAge, headers304), env);
  await ready?.();
  for (let i = 0; i < calls; i++) {
    if (i > 0 && waitMs > 0) await sleep(waitMs);
    // A new document each time (an alias): the response cache never answers it, every call reaches the HTTP cache.
    const answer = await facade.post(`{ a${i}: catalogProducts(catalogId: "x") }`, undefined, key);
    expect(answer.body.data[`a${i}`].data).toHaveLength(1);
  }
  return upstream.requests.map((r) => r.headers['if-none-match'] ?? '-');
}

const expected = ['-', ...Array<string>(calls - 1).fill('"v1"')];

describe.each([
  ['in memory', false],
  ['in Redis', true],
])('the HTTP cache %s revalidates every reuse of a stored answer', (_name, withRedis) => {
  const run = async (maxAge: number, headers304: Record<string, string>, extra: Record<string, string>, waitMs = 0) => {
    if (!withRedis) return ifNoneMatchSeen(maxAge, headers304, extra, waitMs);
    const redis = await startRedis();
    try {
      const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: SLOW_REDIS_OK, ...extra };
      return await ifNoneMatchSeen(maxAge, headers304, env, waitMs, () => untilConnected(redis, 3));
    } finally {
      await redis.stop();
    }
  };

  it('max-age=0, the 304 repeating it', async () => {
    expect(await run(0, { 'cache-control': 'max-age=0' }, {})).toEqual(expected);
  }, 30_000);

  it('max-age=0, the 304 repeating it, without last-known-good copies or coalescing', async () => {
    const off = { PIM_STALE_IF_ERROR_MS: '0', PIM_COALESCE: 'false' };
    expect(await run(0, { 'cache-control': 'max-age=0' }, off)).toEqual(expected);
  }, 30_000);

  it('max-age=0, the 304 without a Cache-Control', async () => {
    expect(await run(0, {}, {})).toEqual(expected);
  }, 30_000);

  it('max-age=1, the 304 repeating it, each call once the last is stale', async () => {
    expect(await run(1, { 'cache-control': 'max-age=1' }, {}, 1_100)).toEqual(expected);
  }, 30_000);
});

describe('an answer a 304 confirms, stored again', () => {
  it('is fresh as long as the 304 says: the next call is answered without the PIM', async () => {
    const { upstream, facade } = await servers.start(pim(0, { 'cache-control': 'max-age=60' }), {});
    await facade.post('{ a: catalogProducts(catalogId: "x") }', undefined, key);
    const confirmed = await facade.post('{ b: catalogProducts(catalogId: "x") }', undefined, key);
    expect(confirmed.body.data.b.data).toHaveLength(1);
    const hit = await facade.post('{ c: catalogProducts(catalogId: "x") }', undefined, key);
    expect(hit.body.data.c.data).toEqual(confirmed.body.data.b.data);
    expect(upstream.requests.map((r) => r.headers['if-none-match'] ?? '-')).toEqual(['-', '"v1"']);
  });

  it('is not stored again when the 304 names another ETag: the PIM is asked for the whole answer', async () => {
    let version = 1;
    const { upstream, facade } = await servers.start((req, res) => {
      if (req.headers['if-none-match'] === '"v1"' && version === 1) {
        version = 2;
        return void res.writeHead(304, { etag: '"v2"', 'cache-control': 'max-age=0' }).end();
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0', etag: `"v${version}"` });
      res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ version }] }));
    }, {});
    await facade.post('{ a: catalogProducts(catalogId: "x") }', undefined, key);
    const second = await facade.post('{ b: catalogProducts(catalogId: "x") }', undefined, key);
    expect(second.body.data.b.data).toEqual([{ version: 2 }]);
    const third = await facade.post('{ c: catalogProducts(catalogId: "x") }', undefined, key);
    expect(third.body.data.c.data).toEqual([{ version: 2 }]);
    expect(upstream.requests.map((r) => r.headers['if-none-match'] ?? '-')).toEqual(['-', '"v1"', '-', '"v2"']);
  });

  it('is never another credential’s', async () => {
    const { upstream, facade } = await servers.start(pim(0, { 'cache-control': 'max-age=0' }), {});
    for (let i = 0; i < 3; i++) await facade.post(`{ a${i}: catalogProducts(catalogId: "x") }`, undefined, key);
    await facade.post('{ b: catalogProducts(catalogId: "x") }', undefined, { 'x-api-key': 'bob-key' });
    expect(upstream.requests.map((r) => r.headers['if-none-match'] ?? '-')).toEqual(['-', '"v1"', '"v1"', '-']);
    expect(upstream.requests[3]!.headers['x-api-key']).toBe('bob-key');
  });
});

describe.each([
  ['in memory', false],
  ['in Redis', true],
])('a stored answer %s a 304 confirms that cannot be read', (_name, withRedis) => {
  it('is dropped, not stored again: every later call reads the PIM’s answer', async () => {
    const redis = withRedis ? await startRedis() : undefined;
    try {
      const extra: Record<string, string> = redis ? { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: SLOW_REDIS_OK } : {};
      const { upstream, facade } = await servers.start(
        (req, res, index) => {
          const headers = { 'content-type': 'application/json', 'cache-control': 'max-age=0', etag: '"v1"' };
          if (req.headers['if-none-match'] === '"v1"') {
            return void res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=0' }).end();
          }
          res.writeHead(200, headers).end(index === 0 ? '{"status":200,"data":[' : '{"status":200,"data":[]}');
        },
        { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0', ...extra },
      );
      if (redis) await untilConnected(redis, 3);
      const query = (i: number) => `{ a${i}: classificationGroups(classificationId: "C") }`;
      expect((await facade.post(query(0), undefined, key)).body.errors).toHaveLength(1);
      const failed: number[] = [];
      for (let i = 1; i < 8; i++) if ((await facade.post(query(i), undefined, key)).body.errors) failed.push(i);
      expect(failed).toEqual([]);
      // The whole answer read once after the unreadable one was dropped, then revalidated on every use.
      const seen = upstream.requests.map((r) => r.headers['if-none-match'] ?? '-');
      expect(seen.slice(0, 3)).toEqual(['-', '"v1"', '-']);
      expect(seen.slice(3)).toEqual(Array<string>(seen.length - 3).fill('"v1"'));
    } finally {
      await redis?.stop();
    }
  }, 30_000);
});
