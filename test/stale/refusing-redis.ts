import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, onTestFinished } from 'vitest';
import type { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

/** The catalog page of `version`, padded with `padBytes` characters, with the `Age` a cache in front would add. */
export const page =
  (version: string, padBytes = 0, age?: string) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json', ...(age ? { age } : {}) });
    res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, version, pad: 'x'.repeat(padBytes) }] }));
  };

/** What the next outage (the PIM failing with 500) must answer for a copy that may not stand in: nothing. */
export const expectNoStandIn = (during: { data?: { p?: unknown }; errors?: { extensions: { code: string } }[] }) => {
  expect((during as { extensions?: { stale?: unknown } }).extensions?.stale).toBeUndefined();
  expect(during.data?.p ?? null).toBeNull();
  expect(during.errors?.[0]?.extensions.code).toBe('UPSTREAM_ERROR');
};

/**
 * A façade keeping its copies in a Redis of its own (one PIM attempt a call, a breaker that stays closed), and the
 * failover the tests stage: Redis demoted (`refuse`: writes and deletes get READONLY) and promoted again (`accept`).
 */
export async function withRefusingRedis(
  servers: ReturnType<typeof closedAfterEach>,
  handler: UpstreamHandler,
  env: Record<string, string> = {},
) {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const started = await servers.start(handler, {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '2000',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
    ...env,
  });
  // Its connections, one per store that uses Redis: three, two with the HTTP cache off (counted with CLIENT LIST).
  await untilConnected(redis, env['PIM_CACHE'] === 'false' ? 2 : 3);
  const copies = () => redis.client.keys('pim-graphql:lkg:*');
  return {
    ...started,
    redis,
    refuse: () => redis.client.call('REPLICAOF', '127.0.0.1', '1'),
    accept: () => redis.client.call('REPLICAOF', 'NO', 'ONE'),
    copies,
    /** The one copy Redis keeps, or null. */
    kept: async () => {
      const keys = await copies();
      return keys.length === 1 ? redis.client.get(keys[0]!) : null;
    },
    /** Redis has refused a store of a kept copy. */
    refusedAStore: () =>
      expect
        .poll(async () => (await started.facade.get('/metrics')).text)
        .toMatch(/^redis_command_failures_total\{store="stale"\} [1-9]/m),
  };
}
