import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

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
