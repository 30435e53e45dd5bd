import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HELD_MS = 4_000;
const RETRY_AFTER_S = 8;
const GRACE_MS = 4_000;

// The first call is held 4 s, then throttled with a Retry-After of 8 s; any later one is throttled at once.
const throttling: UpstreamHandler = (_req, res, attempt) => {
  if (attempt! > 0) return void res.writeHead(429, { 'retry-after': String(RETRY_AFTER_S) }).end();
  const timer = setTimeout(() => res.writeHead(429, { 'retry-after': String(RETRY_AFTER_S) }).end(), HELD_MS);
  res.once('close', () => clearTimeout(timer));
};

// docs/operations.md, Shutdown: a call waiting to retry fails as the grace is about to end. A request that joined
// another's call, which failed where that one could not wait out the Retry-After and the joiner can, waits to ask
// again (steps/coalesce.ts): it is let go too, with the failure it waited on.
it('a joiner waiting to ask again after a Retry-After is answered before the shutdown grace ends', async () => {
  const { facade, upstream } = await servers.start(throttling, {
    PIM_RETRIES: '1',
    PIM_CACHE: 'false',
    GRAPHQL_BUDGET_MS: '11500',
    PIM_TIMEOUT_MS: '6000',
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
  });
  const first = facade.post('{ a: catalogProducts(catalogId: "X") }');
  await expect.poll(() => upstream.requests.length).toBe(1);
  await sleep(2_000);
  const joiner = facade.post('{ b: catalogProducts(catalogId: "X") }').then(
    ({ status, body }) => ({ status, body }),
    () => 'cut',
  );
  // At about 4 s the 429 comes: the first (7.5 s left) cannot wait 8 s; the joiner (9.5 s left) waits to ask again.
  expect((await first).body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_RATE_LIMITED');
  await sleep(300);
  const closed = facade.close();
  expect(await joiner).toMatchObject({
    status: 200,
    body: { errors: [{ extensions: { code: 'UPSTREAM_RATE_LIMITED' } }] },
  });
  expect(upstream.requests).toHaveLength(1);
  await closed;
}, 30_000);
