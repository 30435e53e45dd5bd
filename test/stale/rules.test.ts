import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startFacade, useFacade } from '../helpers/facade.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

/** Answers like `answerFor('v1')` with the caching headers given. */
const withHeaders =
  (headers: Record<string, string>) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    answerFor('v1')(req, res);
  };

const fixture = useFacade({ PIM_API_KEY: 'key-of-a-123', PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000' });
const field = (id: string) => `{ products: catalogProducts(catalogId: "${id}") }`;
const ask = async (id: string, headers: Record<string, string> = {}) =>
  (await fixture.facade.post(field(id), {}, headers)).body;

async function metric(pattern: RegExp): Promise<number> {
  const { body } = await fixture.facade.app.metrics();
  return Number(pattern.exec(body)?.[1] ?? 0);
}

describe('which failures get the last-known-good answer', () => {
  it.each([
    [401, 'UNAUTHENTICATED'],
    [403, 'FORBIDDEN'],
    [404, 'NOT_FOUND'],
  ])('never a %i: it is the PIM’s answer', async (status, code) => {
    // The caller's own key: a 401 to the server's key alone is a fault of the façade's setup instead.
    const caller = { 'x-api-key': 'key-of-b-456' };
    fixture.upstream.respond(answerFor('v1'));
    expect((await ask(`ANSWER${status}`, caller)).data.products.data[0].version).toBe('v1');
    fixture.upstream.respond(faults.status(status, '{"error":"gone"}'));
    const body = await ask(`ANSWER${status}`, caller);
    expect(body.errors[0].extensions.code).toBe(code);
    expect(body.extensions?.stale).toBeUndefined();
  });

  it('a 429, a 503 and a 2xx that is not JSON do, counted by reason', async () => {
    expect((await ask('LIMITED')).errors).toBeUndefined();
    const before = await metric(/pim_stale_answers_total\{reason="UPSTREAM_RATE_LIMITED"\} (\d+)/);
    fixture.upstream.respond(faults.status(429));
    expect((await ask('LIMITED')).extensions.stale[0].reason).toBe('UPSTREAM_RATE_LIMITED');
    fixture.upstream.respond(faults.status(503));
    expect((await ask('LIMITED')).extensions.stale[0].reason).toBe('UPSTREAM_ERROR');
    // A maintenance page: 200, but not JSON.
    fixture.upstream.respond(faults.status(200, '<html>back soon</html>', { 'content-type': 'text/html' }));
    expect((await ask('LIMITED')).extensions.stale[0].reason).toBe('UPSTREAM_ERROR');
    expect(await metric(/pim_stale_answers_total\{reason="UPSTREAM_RATE_LIMITED"\} (\d+)/)).toBe(before + 1);
    expect(await metric(/pim_cache_outcomes_total\{outcome="stale"\} (\d+)/)).toBeGreaterThanOrEqual(2);
    expect(await metric(/pim_cache_outcomes_total\{outcome="miss"\} (\d+)/)).toBeGreaterThanOrEqual(1);
  });

  it('an answer the PIM marked no-store is never kept', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'no-store' }));
    expect((await ask('SECRET')).errors).toBeUndefined();
    fixture.upstream.respond(faults.status(500));
    expect((await ask('SECRET')).errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  });

  it('the PIM’s stale-if-error sets the window of its answer', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=0, stale-if-error=1' }));
    expect((await ask('SHORT')).errors).toBeUndefined();
    fixture.upstream.respond(faults.status(500));
    expect((await ask('SHORT')).extensions.stale).toHaveLength(1);
    // One second past its freshness it is no longer served; bounded polling, no fixed sleep.
    let body = await ask('SHORT');
    for (let i = 0; i < 60 && body.extensions?.stale; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      body = await ask('SHORT');
    }
    expect(body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  });

  it('a negative Age is no age: it never moves an answer’s window into the future', async () => {
    // Produced "100,000 s from now", the copy once stood in for failures that long past its 1 s window.
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=0, stale-if-error=1', age: '-100000' }));
    expect((await ask('AHEAD')).errors).toBeUndefined();
    fixture.upstream.respond(faults.status(500));
    let body = await ask('AHEAD');
    for (let i = 0; i < 60 && body.extensions?.stale; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      body = await ask('AHEAD');
    }
    expect(body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  });

  it('a credential never gets another credential’s answer', async () => {
    fixture.upstream.respond(answerFor('v1'));
    expect((await ask('MINE', { 'x-api-key': 'key-of-b-456' })).data.products.data[0].key).toBe('B');
    fixture.upstream.respond(faults.status(500));
    expect((await ask('MINE', { 'x-api-key': 'key-of-b-456' })).data.products.data[0].key).toBe('B');
    expect((await ask('MINE')).errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  });
});

describe('readiness', () => {
  it('is never answered from a kept copy: its probe wants the PIM’s own word', async () => {
    // This upstream answers the probe's made-up id with a 200, so a copy of it would be kept.
    const upstream = await startUpstream(answerFor('v1'));
    const facade = await startFacade(upstream.url, { READINESS_MAX_AGE_MS: '100', PIM_RETRIES: '0' });
    try {
      expect((await facade.get('/readiness')).status).toBe(200);
      upstream.respond(faults.status(500));
      await expect.poll(async () => (await facade.get('/readiness')).status).toBe(503);
    } finally {
      await facade.close();
      await upstream.close();
    }
  });
});

describe('Surrogate-Key', () => {
  it('names the catalogs and classifications behind a cacheable response', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=60' }));
    const query =
      '{ a: catalogProducts(catalogId: "MASTER", classificationId: "ETIM-9") b: classificationGroups(classificationId: "ECLASS") }';
    const response = await fetch(`${fixture.facade.url}?query=${encodeURIComponent(query)}`);
    expect(response.headers.get('cache-control')).toMatch(/^public/);
    expect(response.headers.get('surrogate-key')?.split(' ').sort()).toEqual([
      'catalog:MASTER',
      'classification:ECLASS',
      'classification:ETIM-9',
    ]);
  });

  // 100 emoji make a 1,200-character tag, and 50 entity references a 76 KB header that Node's own client refused.
  it('is never longer than a CDN takes: a response it cannot tag is kept by browsers alone', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=60' }));
    const get = (id: string, headers: Record<string, string> = {}) =>
      fetch(`${fixture.facade.url}?query=${encodeURIComponent(field(id))}`, { headers });
    const seen = async (response: Promise<Response>) => {
      const { status, headers } = await response;
      return [status, headers.get('cache-control'), headers.get('surrogate-key')];
    };
    expect(await seen(get('\u{1F600}'.repeat(100)))).toEqual([200, 'private, max-age=60', null]);
    // A caller's own answer was private already: the browser keeps it as before, and no CDN ever did.
    expect(await seen(get('\u{1F601}'.repeat(100), { 'x-api-key': 'key-of-b-456' }))).toEqual([
      200,
      'private, max-age=60',
      null,
    ]);
    // 4 KB of tags in all is the most: past it, the same (15 ids of spaces, each tag 388 characters encoded).
    const ids = Array.from({ length: 15 }, (_, i) => `"${String(i).padStart(2, '0')}${' '.repeat(126)}"`);
    const wide = `{ ${ids.map((id, i) => `p${i}: catalogProducts(catalogId: ${id})`).join(' ')} }`;
    const response = await fetch(`${fixture.facade.url}?query=${encodeURIComponent(wide)}`);
    expect([response.headers.get('cache-control'), response.headers.get('surrogate-key')]).toEqual([
      'private, max-age=60',
      null,
    ]);
  });

  it('is left off responses nobody may store', async () => {
    fixture.upstream.respond(answerFor('v1'));
    const response = await fetch(`${fixture.facade.url}?query=${encodeURIComponent(field('PLAIN'))}`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('surrogate-key')).toBeNull();
  });

  // The cache of whole results answers a repeat whatever the method or Accept of the request that filled it.
  it('follows the repeat’s own Cache-Control, not that of the request the cache of results kept', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=60' }));
    const get = (id: string, accept = 'application/json') =>
      fetch(`${fixture.facade.url}?query=${encodeURIComponent(field(id))}`, { headers: { accept } });
    const post = (id: string) =>
      fetch(fixture.facade.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: field(id) }),
      });
    const seen = async (response: Promise<Response>) => {
      const { headers } = await response;
      return [headers.get('cache-control'), headers.get('surrogate-key')];
    };
    const tagged = ['public, max-age=60, s-maxage=60', 'catalog:FILLED-BY-POST'];
    expect(await seen(post('FILLED-BY-POST'))).toEqual(['no-store', null]);
    expect(await seen(get('FILLED-BY-POST'))).toEqual(tagged);
    expect(await seen(get('FILLED-BY-GET'))).toEqual([tagged[0], 'catalog:FILLED-BY-GET']);
    expect(await seen(post('FILLED-BY-GET'))).toEqual(['no-store', null]);
    expect(await seen(get('FILLED-BY-GET', 'text/event-stream'))).toEqual(['no-store', null]);
  });
});
