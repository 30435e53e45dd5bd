// @module-tag chromium
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

let app: Server;
let appOrigin: string;
let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  app = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'),
  );
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  upstream = await startUpstream((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=2' });
    res.end(
      JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ key: req.headers['x-api-key'] ?? null }] }),
    );
  });
  facade = await startFacade(upstream.url, { CORS_ORIGINS: appOrigin, PIM_CACHE: 'false' });
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
  await new Promise((resolve) => app?.close(resolve));
});

describe('a cross-origin browser app', { tags: ['chromium'] }, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it('reads the exposed headers, keeps each key apart in its cache, and revalidates with 304', async () => {
    const page = await browser.newPage();
    await page.goto(appOrigin);
    const url = `${facade.url}?query=${encodeURIComponent('{ catalogProducts(catalogId: "C1") }')}`;
    const get = (key: string | null) =>
      page.evaluate(
        async ([url, key]) => {
          const headers: Record<string, string> = { accept: 'application/graphql-response+json' };
          if (key) headers['x-api-key'] = key;
          const response = await fetch(url!, { headers });
          const body = await response.json();
          return {
            status: response.status,
            key: body.data?.catalogProducts?.data?.[0]?.key ?? null,
            etag: response.headers.get('etag'),
            id: response.headers.get('x-request-id'),
            cacheControl: response.headers.get('cache-control'),
          };
        },
        [url, key] as const,
      );
    const a1 = await get('key-a');
    expect(a1).toMatchObject({ status: 200, key: 'key-a', cacheControl: 'private, max-age=2' });
    expect(a1.etag).toMatch(/^"/);
    expect(a1.id).toBeTruthy();
    const calls = upstream.requests.length;
    // From the browser's cache: the same answer, no request.
    expect(await get('key-a')).toMatchObject({ key: 'key-a', id: a1.id });
    expect(upstream.requests.length).toBe(calls);
    // Another key is never given key-a's answer; nor is no key.
    expect((await get('key-b')).key).toBe('key-b');
    expect((await get(null)).key).toBe(null);
    // Expired, it is revalidated: the same body is a 304 the browser reads as its stored 200.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const revalidated = await get('key-a');
    expect(revalidated).toMatchObject({ status: 200, key: 'key-a', etag: a1.etag });
    expect(revalidated.id).not.toBe(a1.id);
  }, 60_000);
});
