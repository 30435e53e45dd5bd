// @module-tag redis-server
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it, onTestFinished } from 'vitest';
import { startFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { startRedis, SLOW_REDIS_OK } from '../helpers/redis.ts';
import { startUpstream } from '../helpers/upstream.ts';

// The fleet's invalidation record was read before the connection was up, which fails at once (no offline
// queue): every start with a healthy Redis logged a warn line and counted a Redis failure.
it('starts against a healthy Redis without a warning or a failure counted', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const upstream = await startUpstream();
  onTestFinished(() => upstream.close());
  const { logger, lines } = captureLogs('info');
  const facade = await startFacade(upstream.url, { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: SLOW_REDIS_OK }, { logger });
  onTestFinished(() => facade.close());
  // Two polls of the record (one a second) after the first.
  await sleep(2_500);
  expect(lines.filter((line) => line.level >= 40)).toEqual([]);
  const metrics = await (await fetch(`${facade.origin}/metrics`)).text();
  expect(metrics).not.toMatch(/^redis_command_failures_total\{[^}]*\} [1-9]/m);
});
