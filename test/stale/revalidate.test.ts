import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { closedAfterEach, type Facade } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

const SLOW_MS = 3_000;
const query = '{ products: catalogProducts(catalogId: "C1") }';
const headers = { 'x-api-key': 'key-of-a-123' };

/** Answers like `answerFor(version)` with extra headers, after `delayMs`. */
const answer =
  (version: string, extra: Record<string, string> = {}, delayMs = 0) =>
  (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(extra)) res.setHeader(name, value);
    const timer = setTimeout(() => answerFor(version)(req, res), delayMs);
    res.once('close', () => clearTimeout(timer));
  };

const outcome = async (facade: Facade, name: string) => {
  const { body } = await facade.app.metrics();
  return Number(new RegExp(`pim_cache_outcomes_total\\{outcome="${name}"\\} (\\d+)`).exec(body)?.[1] ?? 0);
};

describe.each<{ via: string; env: Record<string, string>; extra: Record<string, string> }>([
  { via: 'PIM_STALE_WHILE_REVALIDATE_MS', env: { PIM_STALE_WHILE_REVALIDATE_MS: '60000' }, extra: {} },
  {
    via: 'the upstream’s stale-while-revalidate',
    env: {},
    extra: { 'cache-control': 'max-age=0, stale-while-revalidate=60' },
  },
])('stale-while-revalidate through $via', ({ env, extra }) => {
  const { start } = closedAfterEach();

  it('answers 50 concurrent requests on an expired key at once while the slow PIM gets exactly one call', async () => {
    const { upstream, facade } = await start(answer('v1', extra), env);
    const warm = await facade.post(query, {}, headers);
    expect(warm.body.data.products.data[0].version).toBe('v1');
    upstream.respond(answer('v2', extra, SLOW_MS));
    // Until the answer's freshness runs out (at once, or after its max-age), it is a plain hit.
    let first = await facade.post(query, {}, headers);
    for (let i = 0; i < 100 && !first.body.extensions?.stale; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      first = await facade.post(query, {}, headers);
    }
    expect(first.body.extensions.stale).toEqual([
      { path: ['products'], age: expect.any(Number), reason: 'revalidating' },
    ]);

    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 50 }, () => facade.post(query, {}, headers)));
    // Well under the PIM's delay: nobody waited for it.
    expect(Date.now() - started).toBeLessThan(SLOW_MS / 2);
    for (const { body, headers: responseHeaders } of answers) {
      expect(body.data.products.data[0]).toMatchObject({ key: 'A', version: 'v1' });
      expect(body.extensions.stale[0].reason).toBe('revalidating');
      expect(responseHeaders.get('cache-control')).toMatch(/no-store/);
      expect(responseHeaders.get('age')).not.toBeNull();
    }
    // The one refresh comes back in the background; until then, and after, the PIM saw one call.
    await expect.poll(() => outcome(facade, 'revalidated'), { timeout: SLOW_MS * 3 }).toBe(1);
    expect(upstream.requests).toHaveLength(1);
    expect(await outcome(facade, 'stale')).toBe(51);
  });
});

describe('cache outcomes', () => {
  const { start } = closedAfterEach();

  it('counts a call the PIM answered as a miss, though a CDN in front of it sent `Age`', async () => {
    const { upstream, facade } = await start(answer('v1', { 'cache-control': 'max-age=60', age: '3' }));
    // The third asks C1 again under another alias: past the cache of whole results, a hit of the HTTP cache.
    for (const field of [
      'c1: catalogProducts(catalogId: "C1")',
      'catalogProducts(catalogId: "C2")',
      'again: catalogProducts(catalogId: "C1")',
    ]) {
      expect((await facade.post(`{ ${field} }`, {}, headers)).body.errors).toBeUndefined();
    }
    expect(upstream.requests).toHaveLength(2);
    expect([await outcome(facade, 'miss'), await outcome(facade, 'hit')]).toEqual([2, 1]);
  });
});

describe('a lifetime of one second', () => {
  const { start } = closedAfterEach();

  // The kept copy's freshness ended a second early (the HTTP cache counts from its own receipt): max-age=1 was
  // stale at once, so every repeat went out `no-store`, marked stale, with a refresh behind it.
  it('is fresh for a repeat right after it', async () => {
    const { upstream, facade } = await start(answer('v1', { 'cache-control': 'max-age=1, stale-while-revalidate=30' }));
    expect((await facade.post('{ a: catalogProducts(catalogId: "C1") }', {}, headers)).body.errors).toBeUndefined();
    const repeat = await facade.post('{ b: catalogProducts(catalogId: "C1") }', {}, headers);
    expect(repeat.body.extensions?.stale).toBeUndefined();
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('a request that joins a background refresh', () => {
  const { start } = closedAfterEach();
  const BUDGET_MS = 1_500;

  // A refresh has twice PIM_TIMEOUT_MS; a request that found it in flight waited for it, budget or not.
  it('ends within its own GRAPHQL_BUDGET_MS while the refresh goes on', async () => {
    const { upstream, facade } = await start(answer('v1', { 'cache-control': 'max-age=1, stale-while-revalidate=2' }), {
      GRAPHQL_BUDGET_MS: String(BUDGET_MS),
      PIM_TIMEOUT_MS: '6000',
      PIM_CACHE: 'false',
    });
    await facade.post(query, {}, headers);
    // Every later call hangs: the refresh the next request starts stays in flight.
    upstream.respond(() => undefined);
    await sleep(1_200);
    expect((await facade.post(query, {}, headers)).body.extensions.stale[0].reason).toBe('revalidating');
    // Past the revalidation window (three seconds in all), the next request is no stale hit: it joins the refresh's call.
    await sleep(2_000);
    const started = Date.now();
    const { body } = await facade.post(query, {}, headers);
    expect(Date.now() - started).toBeLessThan(BUDGET_MS + 1_500);
    expect(body.extensions.stale[0].reason).toBe('BUDGET_EXCEEDED');
    // Since the PIM hung: the refresh's one call, which the late request joined rather than a call of its own.
    expect(upstream.requests).toHaveLength(1);
  }, 15_000);
});

// RFC 9111 §4.2.4 and §5.2.2.2: once stale, such an answer is not used without the PIM's word, unless the PIM
// itself allows it (its own stale-if-error or stale-while-revalidate, RFC 5861).
describe('an answer the PIM marked must-revalidate', () => {
  const { start } = closedAfterEach();
  const mustRevalidate = { 'cache-control': 'max-age=1, must-revalidate' };

  it('is not served stale while it is refreshed, whatever PIM_STALE_WHILE_REVALIDATE_MS says', async () => {
    const { upstream, facade } = await start(answer('v1', mustRevalidate), { PIM_STALE_WHILE_REVALIDATE_MS: '60000' });
    await facade.post(query, {}, headers);
    upstream.respond(answer('v2', mustRevalidate));
    await sleep(2_100);
    const after = await facade.post(query, {}, headers);
    expect(after.body.extensions?.stale).toBeUndefined();
    expect(after.body.data.products.data[0].version).toBe('v2');
  });

  it('does not stand in for a failed call, unless the PIM sent its own stale-if-error', async () => {
    const { upstream, facade } = await start(answer('v1', mustRevalidate), { PIM_RETRIES: '0' });
    await facade.post(query, {}, headers);
    upstream.respond(faults.status(503));
    await sleep(2_100);
    const after = await facade.post(query, {}, headers);
    expect(after.body.extensions?.stale).toBeUndefined();
    expect(after.body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');

    const allowed = { 'cache-control': 'max-age=1, must-revalidate, stale-if-error=60' };
    upstream.respond(answer('v1', allowed));
    const other = '{ products: catalogProducts(catalogId: "C2") }';
    await facade.post(other, {}, headers);
    upstream.respond(faults.status(503));
    await sleep(2_100);
    expect((await facade.post(other, {}, headers)).body.extensions.stale[0].reason).toBe('UPSTREAM_ERROR');
  });

  it('ends the older copy an earlier answer left, which may not stand in for it either', async () => {
    const { upstream, facade } = await start(answer('v1', { 'cache-control': 'max-age=1' }), { PIM_RETRIES: '0' });
    await facade.post(query, {}, headers);
    await sleep(1_200);
    upstream.respond(answer('v2', mustRevalidate));
    expect((await facade.post(query, {}, headers)).body.data.products.data[0].version).toBe('v2');
    upstream.respond(faults.status(503));
    await sleep(1_200);
    const after = await facade.post(query, {}, headers);
    expect(after.body.extensions?.stale).toBeUndefined();
    expect(after.body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  });
});

// RFC 9111 §4.3.4: a 304 makes the stored answer fresh again. undici replays it with the Age it had before.
describe('an answer the PIM confirms with 304', () => {
  const { start } = closedAfterEach();
  const TAG = '"v1"';
  const confirming = (req: IncomingMessage, res: ServerResponse) => {
    const validators = { 'cache-control': 'max-age=2', etag: TAG };
    if (req.headers['if-none-match'] === TAG) return void res.writeHead(304, validators).end();
    for (const [name, value] of Object.entries(validators)) res.setHeader(name, value);
    answerFor('v1')(req, res);
  };
  const url = `/graphql?query=${encodeURIComponent(query)}`;
  const validatorsSent = (upstream: { requests: Array<{ headers: Record<string, unknown> }> }) =>
    upstream.requests.map((r) => r.headers['if-none-match']);

  it('goes out fresh, as the PIM just said it is', async () => {
    const { upstream, facade } = await start(confirming, { PIM_API_KEY: 'key-of-a-123' });
    expect((await facade.get(url)).headers.get('cache-control')).toBe('public, max-age=2, s-maxage=2');
    await sleep(2_600);
    const confirmed = await facade.get(url);
    expect(validatorsSent(upstream)).toEqual([undefined, TAG]);
    expect(confirmed.headers.get('cache-control')).toMatch(/^public, max-age=[12], s-maxage=[12]$/);
  });

  it('is not served stale again once a background refresh had it confirmed', async () => {
    const env = { PIM_API_KEY: 'key-of-a-123', PIM_STALE_WHILE_REVALIDATE_MS: '60000' };
    const { upstream, facade } = await start(confirming, env);
    await facade.get(url);
    await sleep(2_600);
    expect((await facade.get(url)).body.extensions.stale[0].reason).toBe('revalidating');
    await vi.waitFor(() => expect(validatorsSent(upstream)).toEqual([undefined, TAG]));
    await sleep(200);
    const other = `/graphql?query=${encodeURIComponent('{ again: catalogProducts(catalogId: "C1") }')}`;
    expect((await facade.get(other)).body.extensions?.stale).toBeUndefined();
  });
});
