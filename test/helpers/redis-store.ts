import { afterAll, beforeAll } from 'vitest';
import type { CacheKey, CacheStore, CacheValue } from '../../src/pim/cache/cache-store.ts';
import { createRedisCacheStore } from '../../src/pim/cache/redis-cache-store.ts';
import { closeRedis, createRedis } from '../../src/redis.ts';
import { startRedis } from './redis.ts';

/**
 * A throwaway redis-server for the file, and replicas of the HTTP cache's Redis store on it, as cache.ts makes them:
 * `bound` bytes in all, no body over a quarter of it unless `maxEntryBytes` says otherwise.
 */
export function useRedisStores(bound: number) {
  const server = {} as { redis: Awaited<ReturnType<typeof startRedis>> };
  const connections: ReturnType<typeof createRedis>[] = [];
  beforeAll(async () => {
    server.redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(connections.map(closeRedis));
    await server.redis.stop();
  });
  const replica = async (maxEntryBytes = bound / 4) => {
    const connection = createRedis(server.redis.url, () => undefined, 2_000);
    connections.push(connection);
    // Commands fail fast until the connection is up.
    if (connection.status !== 'ready') await new Promise((resolve) => connection.once('ready', resolve));
    return createRedisCacheStore({
      redis: connection,
      maxEntryBytes,
      maxBytes: bound,
      replyTimeoutMs: 2_000,
      missAfterFailureMs: 20_000,
      onError: () => undefined,
    });
  };
  /** Until every command sent so far has been answered (deletes are sent, not awaited). */
  const settled = () => Promise.all(connections.map((connection) => connection.ping()));
  return { server, replica, settled };
}

export const key: CacheKey = { method: 'GET', origin: 'http://pim.test', path: '/catalogs/C/products', headers: {} };

/** An answer cached at `cachedAt` (epoch ms) for `lifetime` ms, varying on `vary` if given. */
export const valueAt = (cachedAt: number, lifetime = 600_000, vary?: Record<string, string>) =>
  ({
    statusCode: 200,
    statusMessage: 'OK',
    headers: { 'content-type': 'application/json' },
    cacheControlDirectives: {},
    cachedAt,
    staleAt: cachedAt + lifetime,
    deleteAt: cachedAt + lifetime,
    ...(vary ? { vary } : {}),
  }) as CacheValue;

export const write = (store: CacheStore, value: CacheValue, body: string, at = key) =>
  new Promise<void>((resolve) => {
    const stream = store.createWriteStream(at, value)!;
    stream.on('close', resolve).on('finish', resolve).end(Buffer.from(body));
  });

/** A write whose body is still coming in, `head` of it so far: `end` finishes it. */
export const slowWrite = (store: CacheStore, value: CacheValue, head: string, at = key) => {
  const stream = store.createWriteStream(at, value)!;
  const done = new Promise((resolve) => stream.on('close', resolve).on('finish', resolve));
  stream.write(head);
  return {
    end: async (tail: string) => {
      stream.end(tail);
      await done;
    },
  };
};

export const read = async (store: CacheStore, at = key) => {
  const found = await store.get(at);
  return found && Buffer.concat([found.body as Buffer].flat()).toString();
};
