import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HELD_MS = 3_500;
const RETRY_AFTER_S = 3;

/**
 * A PIM that holds its first call HELD_MS, then throttles it (`Retry-After: 3`) and every call for 2.5 s after;
 * past that it answers.
 */
function throttling(): UpstreamHandler {
  let okAt: number | undefined;
  return (req, res, attempt) => {
    if (attempt === 0) {
      const timer = setTimeout(() => {
        okAt = Date.now() + 2_500;
        res.writeHead(429, { 'retry-after': String(RETRY_AFTER_S) }).end();
      }, HELD_MS);
      return void res.once('close', () => clearTimeout(timer));
    }
    if (okAt === undefined || Date.now() < okAt) return void res.writeHead(429, { 'retry-after': '1' }).end();
    echo(req, res);
  };
}

// The shared call is the first request's: a Retry-After its budget has no room for ends it, and a joiner whose budget
// has room got that request's UPSTREAM_RATE_LIMITED though its own call would have waited and been answered (as it is
// with PIM_COALESCE=false). The Retry-After is no verdict on the joiner: it waits it out, then asks again.
it('a joiner whose budget has room for the Retry-After the first request could not wait gets the answer', async () => {
  const { facade, upstream } = await servers.start(throttling(), {
    PIM_RETRIES: '1',
    PIM_CACHE: 'false',
    GRAPHQL_BUDGET_MS: '6000',
    PIM_TIMEOUT_MS: '5000',
  });
  // Two operations (no sharing of whole results), one upstream call: the second joins the first's.
  const first = facade.post('{ a: catalogProducts(catalogId: "X") }');
  await sleep(2_000);
  const joiner = await facade.post('{ b: catalogProducts(catalogId: "X") }');
  expect((await first).body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_RATE_LIMITED');
  expect(joiner.body.errors).toBeUndefined();
  expect(joiner.body.data.b).toBeDefined();
  // It waited as the PIM asked: one more call, once the Retry-After had passed.
  expect(upstream.requests).toHaveLength(2);
  expect(upstream.requests[1]!.at - upstream.requests[0]!.at).toBeGreaterThanOrEqual(HELD_MS + RETRY_AFTER_S * 1_000);
}, 30_000);
