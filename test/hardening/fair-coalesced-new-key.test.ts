import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { postTimed } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

// 5b2b399 puts a key the PIM has not accepted in the one queue partition of all such keys, fixed per request. A call
// started by a request of key K while K was new waits there; a later request of K, once the PIM accepted K, asks the
// same path and joins that call (coalesce.ts keys flights by credential partition), but its share is not lent to it
// (`lent`: another queueKey). So an accepted key's call waits behind the made-up keys' queue, the very thing 5b2b399
// set out to end, while its own partition has a free connection.
const { start } = closedAfterEach();
const K = 'real-key-0001-abcdef';
const q = (id: string) => `{ classificationGroups(classificationId: "${id}") }`;

it("an accepted key's call does not wait behind made-up keys by joining a call its key queued while new", async () => {
  const held: ServerResponse[] = [];
  let releaseK0: (() => void) | undefined;
  const { upstream, facade } = await start(
    (req, res) => {
      const key = req.headers['x-api-key'];
      if (key === K && req.url!.includes('/k0')) return void (releaseK0 = () => echo(req, res));
      if (key === K) return echo(req, res);
      held.push(res); // a made-up key: the PIM takes its time to refuse it (here until the test ends)
    },
    // 4 connections: the keys not yet accepted share 3 of them, one stays free for accepted credentials.
    { PIM_MAX_CONCURRENCY: '4', PIM_CACHE: 'false', PIM_RETRIES: '0', GRAPHQL_BUDGET_MS: '4000' },
  );
  const queued = async () => Number(/^pim_upstream_calls_queued (\d+)/m.exec((await facade.get('/metrics')).text)?.[1]);
  const abort = new AbortController();
  const madeUp = (i: number) =>
    postTimed(facade.origin, q(`m${i}`), { 'x-api-key': `made-up-${i}-kkkkkkkkkkkk` }, abort.signal).catch(() => 0);
  const pending: Promise<unknown>[] = [];
  try {
    // Three made-up keys hold the unproven keys' three connections.
    for (let i = 0; i < 3; i++) pending.push(madeUp(i));
    await expect.poll(() => upstream.requests.length).toBe(3);
    // K's first request waits with them, then three more made-up keys.
    pending.push(postTimed(facade.origin, q('k0'), { 'x-api-key': K }, abort.signal).catch(() => 0));
    await expect.poll(queued).toBe(1);
    for (let i = 3; i < 6; i++) pending.push(madeUp(i));
    await expect.poll(queued).toBe(4);
    // One refusal: K's call is next in turn and reaches the PIM.
    held.shift()!.writeHead(401, { 'content-type': 'application/json' }).end('{"status":401,"meta":{},"error":"no"}');
    await expect.poll(() => releaseK0 !== undefined).toBe(true);
    // A second request of K, sent before the PIM has answered K: it queues with the unproven keys.
    pending.push(postTimed(facade.origin, q('shared'), { 'x-api-key': K }, abort.signal).catch(() => 0));
    await expect.poll(queued).toBe(4);
    // The PIM answers K: K is accepted.
    releaseK0!();
    await expect.poll(queued).toBe(3);
    // A third request of K, its key accepted now, asks the path the second is queued for.
    const third = await postTimed(facade.origin, q('shared'), { 'x-api-key': K });
    expect(third.body.errors?.map((e) => e.extensions.code)).toBeUndefined();
    // Its own partition has a free connection: answered at once, not when the second request's budget runs out.
    expect(third.ms, `accepted key answered in ${third.ms} ms`).toBeLessThan(1_500);
  } finally {
    abort.abort();
    for (const res of held) res.destroy();
    await Promise.allSettled(pending);
  }
}, 20_000);
