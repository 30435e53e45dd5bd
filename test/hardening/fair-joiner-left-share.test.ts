import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

// docs/operations.md, Fairness: "Inside its credential, a request with no call in flight is first in line: it gets
// the next connection its credential is given, whatever burst other requests of that credential have queued", and
// "Shared calls. A call identical to one another request ... has already queued joins that call and lends it its
// share". A joiner that leaves (its client disconnects) never takes its share back: src/pim/steps/coalesce.ts leave()
// only counts waiters down, and src/pim/admission/fair-queue.ts keeps the waiter in every share joined.listen() gave
// it. So one client's burst, joined by requests it sends and drops at once, waits in as many idle shares as it
// dropped requests, each "with no call in flight", ahead of a real request of the same credential that has none:
// requests that are gone (holding no door slot) outrank one that is waiting.

const { start } = closedAfterEach();

const query = (fields: string) => JSON.stringify({ query: `{ ${fields} }` });
const field = (alias: string, id: string) => `${alias}: classificationGroups(classificationId: "${id}")`;

it('a request with no call in flight is served before the burst of another, whatever requests that left joined it', async () => {
  let blocked: ServerResponse | undefined;
  const arrived: string[] = [];
  const handler: UpstreamHandler = (req, res) => {
    const id = /classifications\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? req.url!;
    arrived.push(id);
    if (id === 'block') return void (blocked = res);
    setTimeout(() => echo(req, res), 20);
  };
  const { facade } = await start(handler, {
    PIM_CACHE: 'false',
    PIM_MAX_CONCURRENCY: '1',
    PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '1',
  });
  const key = { 'x-api-key': 'one-shared-key' };
  const post = (body: string, signal?: AbortSignal) =>
    fetch(facade.url, { method: 'POST', headers: { 'content-type': 'application/json', ...key }, body, signal });
  const metric = async (name: string) => {
    const text = (await facade.get('/metrics')).text;
    return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm'))].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  };

  // The PIM has answered the key: it is a credential of its own, each request a share in it (a key it has not
  // accepted waits in one share with the others, test/hardening/fair-made-up-keys-queue.test.ts).
  await (await post(query(field('w', 'warm')))).text();
  // The one connection is held.
  const blocker = post(query(field('b', 'block')));
  await expect.poll(() => arrived).toContain('block');
  // The attacker's burst: 9 calls of one request, queued.
  const burst = post(query(Array.from({ length: 9 }, (_, i) => field(`a${i}`, `burst-${i}`)).join(' ')));
  await expect.poll(() => metric('pim_upstream_calls_queued')).toBe(9);
  // 8 requests each join one of those calls (an alias twice: the second load is a dedup hit, seen in the metrics
  // once the request's loads ran), then their clients leave.
  const joiners = Array.from({ length: 8 }, (_, j) => {
    const controller = new AbortController();
    const sent = post(
      query(`${field('x', `burst-${j + 1}`)} ${field('y', `burst-${j + 1}`)}`),
      controller.signal,
    ).catch(() => 'left');
    return { controller, sent };
  });
  await expect.poll(() => metric('pim_dedup_hits_total')).toBe(8);
  for (const { controller } of joiners) controller.abort();
  await Promise.all(joiners.map(({ sent }) => sent));
  await expect.poll(() => metric('graphql_client_disconnects_total')).toBe(8);
  // Another client of the same credential, with nothing in flight, asks one call.
  const victim = post(query(field('v', 'victim')));
  await expect.poll(() => metric('pim_upstream_calls_queued')).toBe(10);
  blocked!.writeHead(200, { 'content-type': 'application/json' }).end('{"status":200,"meta":{},"data":[]}');
  await Promise.all([blocker, burst, victim].map(async (answer) => (await answer).text()));
  const after = arrived.slice(arrived.indexOf('block') + 1);
  // The burst's request had no call in flight either when the connection freed: one of its calls may go first.
  expect(after.indexOf('victim'), `order after the blocker: ${after.join(' ')}`).toBeLessThanOrEqual(1);
}, 30_000);
