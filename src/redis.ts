import { Redis, type RedisOptions } from 'ioredis';

/**
 * Connection options for a `redis://` or `rediss://` URL (user, password, database number, TLS),
 * shared by every part of the service that keeps state in Redis. Keys are prefixed `pim-graphql:`.
 */
function redisOptions(url: string): RedisOptions {
  const { hostname, port, username, password, pathname, protocol } = new URL(url);
  return {
    host: hostname,
    port: Number(port || 6379),
    ...(username ? { username: decodeURIComponent(username) } : {}),
    ...(password ? { password: decodeURIComponent(password) } : {}),
    db: Number(pathname.slice(1) || 0),
    ...(protocol === 'rediss:' ? { tls: {} } : {}),
    keyPrefix: 'pim-graphql:',
    // While Redis is away every command fails at once (callers treat that as a miss) instead of
    // queueing behind reconnects until the upstream deadline passes.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: (attempt: number) => Math.min(attempt * 250, 5_000),
  };
}

/**
 * Opens a connection with {@link redisOptions}. Connection failures go to `onError` (ioredis
 * retries on its own); without a listener they would be unhandled `error` events.
 */
export function createRedis(url: string, onError: (error: Error) => void): Redis {
  const redis = new Redis(redisOptions(url));
  redis.on('error', onError);
  return redis;
}

/** Closes gracefully when connected (pending replies arrive), at once when Redis is away. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') return void redis.disconnect();
  await redis.quit().catch(() => redis.disconnect());
}

/** Wraps `report` so it is told at most once per `intervalMs`: Redis being away fails every command. */
export function throttled(report: (error: Error) => void, intervalMs: number): (error: Error) => void {
  let reportedAt = -Infinity;
  return (error) => {
    if (Date.now() - reportedAt < intervalMs) return;
    reportedAt = Date.now();
    report(error);
  };
}
