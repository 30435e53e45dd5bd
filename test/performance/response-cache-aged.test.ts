import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { RecordedRequest } from '../helpers/upstream.ts';

// `short`: answered at once, max-age=4. `slow`: answered after 3.5 s, max-age=60. A query reading both reads `short`
// at t≈0 and finishes at t≈3.5 s, when `short` has about half a second of freshness left.
const answering = (shortMaxAgeS: number, slowMs: number) => (req: IncomingMessage, res: ServerResponse) => {
  const slow = (req.url ?? '').includes('/catalogs/slow/');
  const send = () => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': `max-age=${slow ? 60 : shortMaxAgeS}` });
    res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
  };
  if (!slow) return send();
  const timer = setTimeout(send, slowMs);
  res.once('close', () => clearTimeout(timer));
};
const answer = answering(4, 3_500);

const servers = closedAfterEach();
const query = '{ a: catalogProducts(catalogId: "short") b: catalogProducts(catalogId: "slow") }';
const url = `/graphql?query=${encodeURIComponent(query)}`;
const env = { RESPONSE_CACHE_MAX_BYTES: '1048576' };
const shortCalls = (requests: RecordedRequest[]) => requests.filter((r) => r.url.includes('/catalogs/short/'));

describe('an upstream answer read early in a slow execution', () => {
  it('is not served from the cache of results past its own freshness', async () => {
    const { upstream, facade } = await servers.start(answer, env);
    expect((await facade.get(url)).body.errors).toBeUndefined();
    const shortReadAt = shortCalls(upstream.requests)[0]!.at;
    const { hits } = facade.app.responses!.stats();
    // 300 ms past `short`'s freshness (4 s from when the PIM answered it): its HTTP cache entry is stale too.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, shortReadAt + 4_300 - Date.now())));
    const again = await facade.get(url);
    expect(again.body.errors).toBeUndefined();
    // Executed again: `short` asked again, not answered from the entry.
    expect(facade.app.responses!.stats().hits).toBe(hits);
    expect(shortCalls(upstream.requests)).toHaveLength(2);
  }, 20_000);

  it('makes the response claim no more freshness than that answer has left when it goes out', async () => {
    const { upstream, facade } = await servers.start(answer, env);
    const first = await facade.get(url);
    const leftS = 4 - (Date.now() - shortCalls(upstream.requests)[0]!.at) / 1000;
    const maxAge = Number(/max-age=(\d+)/.exec(first.headers.get('cache-control') ?? '')?.[1] ?? 0);
    expect(maxAge).toBeLessThanOrEqual(Math.max(0, Math.ceil(leftS)));
  }, 20_000);
});

const maxAgeOf = (headers: Headers) => Number(/max-age=(\d+)/.exec(headers.get('cache-control') ?? '')?.[1] ?? 0);

// A response claims no more freshness than its least fresh answer has left when it
// goes out, counted as Math.ceil of whole seconds. The entry of the cache of results stores the already-ceiled
// figure and a hit takes whole seconds off it with Math.floor: the two roundings add up on every hit.
it('a hit of the cache of results claims no more freshness than its answers have left when it goes out', async () => {
  const { upstream, facade } = await servers.start(answering(10, 500), { RESPONSE_CACHE_MAX_BYTES: '1048576' });
  const first = await facade.get(url);
  expect(first.body.errors).toBeUndefined();
  const filledAt = Date.now();
  const shortAt = upstream.requests.find((r) => r.url.includes('/catalogs/short/'))!.at;
  const { hits } = facade.app.responses!.stats();
  await sleep(Math.max(0, filledAt + 700 - Date.now()));
  const hit = await facade.get(url);
  expect(facade.app.responses!.stats().hits).toBe(hits + 1);
  const leftS = 10 - (Date.now() - shortAt) / 1000;
  expect(maxAgeOf(hit.headers)).toBeLessThanOrEqual(Math.ceil(leftS));
}, 20_000);
