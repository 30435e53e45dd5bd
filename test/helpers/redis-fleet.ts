import { afterAll, beforeAll } from 'vitest';
import { startFacade, type Facade } from './facade.ts';
import { SLOW_REDIS_OK, startRedis } from './redis.ts';

export interface RedisFleetOptions<U> {
  /** Starts the upstream every replica calls. */
  upstream: () => Promise<U>;
  /** Settings of every replica, over its REDIS_URL and REDIS_TIMEOUT_MS. */
  env?: Record<string, string>;
  /** How many replicas. @default 2 */
  replicas?: number;
}

/**
 * Registers vitest hooks that start, for the file or the describe block, a throwaway Redis, an
 * upstream, and façade replicas sharing both, as a fleet behind a load balancer runs. Their
 * REDIS_TIMEOUT_MS is SLOW_REDIS_OK: these tests count what Redis holds, not how fast it is.
 * Read `redis`, `upstream` and `replicas` inside tests.
 */
export function useRedisFleet<U extends { url: string; close(): Promise<void> }>({
  upstream,
  env = {},
  replicas = 2,
}: RedisFleetOptions<U>) {
  const fleet = { replicas: [] as Facade[] } as {
    redis: Awaited<ReturnType<typeof startRedis>>;
    upstream: U;
    replicas: Facade[];
  };
  beforeAll(async () => {
    fleet.redis = await startRedis();
    fleet.upstream = await upstream();
    const shared = { REDIS_URL: fleet.redis.url, REDIS_TIMEOUT_MS: SLOW_REDIS_OK, ...env };
    fleet.replicas = await Promise.all(Array.from({ length: replicas }, () => startFacade(fleet.upstream.url, shared)));
  });
  afterAll(async () => {
    await Promise.all(fleet.replicas.map((replica) => replica.close()));
    await fleet.upstream?.close();
    await fleet.redis?.stop();
  });
  return fleet;
}
