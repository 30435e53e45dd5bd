import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { echo, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startRedis } from '../helpers/redis.ts';

const products = '{ catalogProducts(catalogId: "c1", page: 0) }';

describe('REDIS_URL: one cache shared by several façade instances', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let upstream: Upstream;
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    redis = await startRedis();
    upstream = await startUpstream((req, res) => {
      res.setHeader('cache-control', 'max-age=60');
      echo(req, res);
    });
    first = createTestApp(upstream.url, { REDIS_URL: redis.url });
    second = createTestApp(upstream.url, { REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await upstream?.close();
    await redis?.stop();
  });

  it('answers the second instance from what the first one stored', async () => {
    const fromUpstream = await first.query(products, {}, { 'x-api-key': 'secret-one' });
    expect(fromUpstream.body.errors).toBeUndefined();
    // The store writes after the answer has gone out; wait for it rather than race it.
    for (let i = 0; i < 200 && (await redis.client.dbsize()) === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const fromRedis = await second.query(products, {}, { 'x-api-key': 'secret-one' });
    expect(fromRedis.body).toEqual(fromUpstream.body);
    expect(upstream.requests).toHaveLength(1);
  });

  it('keeps entries private per credential and never stores the raw key', async () => {
    await second.query(products, {}, { 'x-api-key': 'secret-two' });
    expect(upstream.requests.map((r) => r.headers['x-api-key'])).toEqual(['secret-one', 'secret-two']);
    const keys = await redis.client.keys('*');
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((key) => key.startsWith('pim-graphql:'))).toBe(true);
    expect(keys.join(' ')).not.toMatch(/secret/);
  });
});

describe('REDIS_URL with Redis gone', () => {
  it('answers from the upstream at once and closes promptly', async () => {
    const upstream = await startUpstream();
    // Nothing listens on the discard port of loopback: every Redis command fails.
    const app = createTestApp(upstream.url, { REDIS_URL: 'redis://127.0.0.1:9/0' });
    try {
      const started = Date.now();
      for (let i = 0; i < 3; i++) {
        const { body } = await app.query(products, {}, { 'x-api-key': 'k' });
        expect(body.errors).toBeUndefined();
      }
      // Generous bound: a queueing client would wait for the 10 s upstream deadline instead.
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(upstream.requests).toHaveLength(3);
    } finally {
      const closing = Date.now();
      await app.close();
      expect(Date.now() - closing).toBeLessThan(3_000);
      await upstream.close();
    }
  });
});
