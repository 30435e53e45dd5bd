import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// docs/operations.md, the cache of whole results: "An entry lives only while every upstream answer the result used is
// fresh (... less two seconds for the rounding of whole-second lifetimes)". `short` is answered at once with
// max-age=10 and no Date (its freshness ends 10 s after the PIM sent it); `slow` after 950 ms with max-age=60.
const answer = (req: IncomingMessage, res: ServerResponse) => {
  const slow = (req.url ?? '').includes('/catalogs/slow/');
  const send = () => {
    res.sendDate = false;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': `max-age=${slow ? 60 : 10}` });
    res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
  };
  if (!slow) return send();
  const timer = setTimeout(send, 950);
  res.once('close', () => clearTimeout(timer));
};

const servers = closedAfterEach();
const until = (at: number) => sleep(Math.max(0, at - Date.now()));
const url = (query: string) => `/graphql?query=${encodeURIComponent(query)}`;

it('a result is never answered from the cache after an upstream answer it used has stopped being fresh', async () => {
  const { upstream, facade } = await servers.start(answer, { RESPONSE_CACHE_MAX_BYTES: '1048576' });
  const headers = { 'x-api-key': 'k' };
  // 1. `short` from the PIM: the HTTP cache keeps it (fresh until sentAt + 10 s).
  expect((await facade.get(url('{ a: catalogProducts(catalogId: "short") }'), headers)).body.errors).toBeUndefined();
  const sentAt = upstream.requests[0]!.at;
  // 2. 1.45 s later, another query reads it from the HTTP cache: undici's Age rounds 1.45 s to 1.
  await until(sentAt + 1_450);
  expect((await facade.get(url('{ b: catalogProducts(catalogId: "short") }'), headers)).body.errors).toBeUndefined();
  // 3. 0.98 s later, a third query reads its parsed body (whole seconds taken off: none) and a slow answer.
  await until(sentAt + 2_430);
  const query = url('{ c: catalogProducts(catalogId: "short") d: catalogProducts(catalogId: "slow") }');
  expect((await facade.get(query, headers)).body.errors).toBeUndefined();
  expect(upstream.requests.filter((r) => r.url.includes('/catalogs/short/'))).toHaveLength(1);
  // Repeats of that query once `short` is no longer fresh (50 ms of slack), until the PIM is asked for it again:
  // none may be answered from the entry (a hit after the refetch would be a new, fresh entry).
  const shortCalls = () => upstream.requests.filter((r) => r.url.includes('/catalogs/short/')).length;
  await until(sentAt + 10_050);
  const staleHits: number[] = [];
  while (Date.now() < sentAt + 12_000 && shortCalls() === 1) {
    const { hits } = facade.app.responses!.stats();
    const at = Date.now();
    await facade.get(query, headers);
    if (facade.app.responses!.stats().hits > hits) staleHits.push(at - sentAt);
    await sleep(20);
  }
  expect(staleHits, 'hits served this long (ms) after `short` was sent, whose max-age is 10 s').toEqual([]);
}, 30_000);
