import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// Each upstream answer is numbered, kept a minute: a response executed afresh shows a new number.
let served = 0;
const answer = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, n: served++ }] }));
};
const fixture = useFacade({ RESPONSE_CACHE_MAX_BYTES: '1048576' }, answer);
const url = (id: string) => `/graphql?query=${encodeURIComponent(`{ catalogProducts(catalogId: "${id}") }`)}`;
const hits = () => fixture.facade.app.responses!.stats().hits;

afterEach(() => void vi.useRealTimers());

// A request's Cache-Control is a list of directives (RFC 9111 §5.2.1), read by name, not searched for words.
describe('the directives of a request’s Cache-Control', () => {
  it('are names: an extension whose name ends in no-cache asks nothing of the cache', async () => {
    await fixture.facade.get(url('extension'));
    const before = hits();
    await fixture.facade.get(url('extension'), { 'cache-control': 'x-no-cache, community="no-store"' });
    expect(hits(), 'an unknown directive was read as no-cache').toBe(before + 1);
  });

  it('honour max-age=N: a result stored longer ago than N seconds is executed afresh', async () => {
    const first = await fixture.facade.get(url('aged'));
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 5_000 });
    const before = hits();
    const young = await fixture.facade.get(url('aged'), { 'cache-control': 'max-age=10' });
    expect(young.text).toBe(first.text);
    expect(hits()).toBe(before + 1);
    const old = await fixture.facade.get(url('aged'), { 'cache-control': 'max-age=3' });
    expect(hits(), 'a result five seconds old was served to max-age=3').toBe(before + 1);
    expect(old.body.errors).toBeUndefined();
  });

  it('honour min-fresh=N: a result fresh for less than N more seconds is executed afresh', async () => {
    await fixture.facade.get(url('min-fresh'));
    const before = hits();
    await fixture.facade.get(url('min-fresh'), { 'cache-control': 'min-fresh=10' });
    expect(hits()).toBe(before + 1);
    await fixture.facade.get(url('min-fresh'), { 'cache-control': 'min-fresh=600' });
    expect(hits(), 'a result fresh for a minute was served to min-fresh=600').toBe(before + 1);
  });

  // What is left counts to the millisecond: 9.4 s of freshness is not the 10 s min-fresh=10 asks for.
  it('honour min-fresh=N to the millisecond: a result fresh 9.4 s more is executed afresh for min-fresh=10', async () => {
    await fixture.facade.get(url('min-fresh-edge'));
    const answeredAt = fixture.upstream.requests.at(-1)!.at;
    // Date only: the entry's own lifetime runs on real time, so it is still held.
    vi.useFakeTimers({ toFake: ['Date'], now: answeredAt + 50_600 });
    const before = hits();
    await fixture.facade.get(url('min-fresh-edge'), { 'cache-control': 'min-fresh=8' });
    expect(hits(), 'a result fresh 9.4 s more was refused to min-fresh=8').toBe(before + 1);
    await fixture.facade.get(url('min-fresh-edge'), { 'cache-control': 'min-fresh=10' });
    expect(hits(), 'a result fresh 9.4 s more was served to min-fresh=10').toBe(before + 1);
  });
});

// RFC 9111 §5.4: a request without Cache-Control that sends `Pragma: no-cache` (HTTP/1.0 clients and proxies, `curl -H
// 'Pragma: no-cache'`) asks past every cache as `Cache-Control: no-cache` does.
describe('a client asking past caches with Pragma: no-cache', () => {
  it('is not answered from the cache of results', async () => {
    const first = await fixture.facade.get(url('pragma'));
    expect(first.body.errors).toBeUndefined();
    const { hits } = fixture.facade.app.responses!.stats();
    await fixture.facade.get(url('pragma'), { pragma: 'no-cache' });
    expect(fixture.facade.app.responses!.stats().hits, 'Pragma: no-cache was answered from the cache of results').toBe(
      hits,
    );
  });

  it('still is when Cache-Control is sent beside it: Cache-Control decides', async () => {
    await fixture.facade.get(url('pragma-beside'));
    const { hits } = fixture.facade.app.responses!.stats();
    await fixture.facade.get(url('pragma-beside'), { pragma: 'no-cache', 'cache-control': 'max-age=60' });
    expect(fixture.facade.app.responses!.stats().hits).toBe(hits + 1);
  });
});
