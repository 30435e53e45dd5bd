import type { ServerResponse } from 'node:http';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';

export const TOKEN = 'a-long-enough-admin-token';

/** A search answer of `version`, fresh for no time: what each replica keeps as its last good copy. */
export const answer = (res: ServerResponse, version: string) =>
  res
    .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0' })
    .end(JSON.stringify({ status: 200, meta: {}, data: [{ version }] }));

/**
 * Replicas over one Redis in front of a PIM that holds its calls (`pim.held`, the last, until the test answers it)
 * while `pim.mode` is `hold`, answers v2 once it is `v2` and fails once it is `down`: a call sent before a purge, its
 * answer coming after another replica read the newer one.
 */
export function useHeldFleet({ replicas, redisTimeoutMs }: { replicas: number; redisTimeoutMs: number }) {
  const pim: { mode: 'hold' | 'v2' | 'down'; held: ServerResponse | undefined } = { mode: 'hold', held: undefined };
  const fleet = useRedisFleet({
    replicas,
    upstream: () =>
      startUpstream((_req, res) => {
        if (pim.mode === 'down') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
        if (pim.mode === 'hold') return void (pim.held = res);
        answer(res, 'v2');
      }),
    env: {
      PIM_RETRIES: '0',
      PIM_BREAKER_THRESHOLD: '1000',
      CACHE_ADMIN_TOKEN: TOKEN,
      PIM_CACHE: 'false',
      REDIS_TIMEOUT_MS: String(redisTimeoutMs),
    },
  });
  return { fleet, pim };
}
