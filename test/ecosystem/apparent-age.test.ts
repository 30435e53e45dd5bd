import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

let version = 'v1';
// Fresh for 60 s, but its Date says it was made 58 s ago (a cache in front of the PIM that sets no Age, or a PIM
// clock behind): RFC 9111 §4.2.3 counts that apparent age, as undici's cache does, so 2 s of freshness are left.
function answer(req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'max-age=60',
    date: new Date(Date.now() - 58_000).toUTCString(),
  });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, version }] }));
}

const servers = closedAfterEach();
const url = `/graphql?query=${encodeURIComponent('{ catalogProducts(catalogId: "C1") }')}`;
const versionOf = (body: any) => body.data.catalogProducts.data[0].version;

describe('the age a Date header gives an upstream answer', () => {
  it('counts in the Cache-Control sent on', async () => {
    const { facade } = await servers.start(answer, { PIM_API_KEY: 'server-key' });
    const maxAge = Number(/max-age=(\d+)/.exec((await facade.get(url)).headers.get('cache-control') ?? '')?.[1]);
    // 60 less the 58 s, give or take the second Date's rounding leaves unknown.
    expect(maxAge).toBeGreaterThanOrEqual(1);
    expect(maxAge).toBeLessThanOrEqual(3);
  });

  it('ends the cached whole result when the HTTP cache ends the answer, not 58 s later', async () => {
    version = 'v1';
    const { facade, upstream } = await servers.start(answer, { PIM_API_KEY: 'server-key' });
    expect(versionOf((await facade.get(url)).body)).toBe('v1');
    version = 'v2';
    await expect
      .poll(async () => versionOf((await facade.get(url)).body), { timeout: 6_000, interval: 250 })
      .toBe('v2');
    expect(upstream.requests).toHaveLength(2);
  });
});

const bodyOf = (req: IncomingMessage, version: string) =>
  JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, version }] });

// A 304 confirms a stored answer, whose old Date then says nothing (send.ts drops it); one that cannot confirm it
// (another validator) is followed by a whole answer on the same call, whose own Date counts.
// 1: stored with a validator, to be revalidated on every use.
const first = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0', etag: '"a"' });
  res.end(bodyOf(req, 'v1'));
};
// 2: the revalidation is answered 304 with another validator: undici's cache drops its entry and asks again in full.
const notModifiedOther = (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(304, { etag: '"b"' });
  res.end();
};
// 3: that full answer is fresh for 60 s but was made 50 s ago (its Date, no Age): 10 s are left.
const oldAnswer = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'max-age=60',
    etag: '"c"',
    date: new Date(Date.now() - 50_000).toUTCString(),
  });
  res.end(bodyOf(req, 'v2'));
};

describe('an answer fetched again after a 304 that could not confirm the stored one', () => {
  it('keeps its own Date: the Cache-Control sent on counts the 50 s it is old', async () => {
    const { facade, upstream } = await servers.start(faults.sequence(first, notModifiedOther, oldAnswer), {
      PIM_API_KEY: 'server-key',
      PIM_STALE_WHILE_REVALIDATE_MS: '0',
    });
    await facade.get(url);
    const second = await facade.get(url);
    expect(upstream.requests.map((r) => r.headers['if-none-match'] ?? null)).toEqual([null, '"a"', null]);
    expect(versionOf(second.body)).toBe('v2');
    const maxAge = Number(/max-age=(\d+)/.exec(second.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeLessThanOrEqual(11);
  });
});
