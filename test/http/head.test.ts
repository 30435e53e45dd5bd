import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { withHeaders } from '../stale/reads.ts';

// RFC 9110 §9.1: a server that answers GET answers HEAD too, with the same header fields and no content (§9.3.2): a
// CDN's or link checker's HEAD of a cacheable GraphQL URL got 405.
const { logger, lines } = captureLogs('info');
const fixture = useFacade({}, withHeaders('v1', { 'cache-control': 'max-age=300' }), { logger });
const url = () =>
  `${fixture.facade.url}?query=${encodeURIComponent('{ products: catalogProducts(catalogId: "MASTER") }')}`;

it('a HEAD of a GraphQL GET answers its headers without the body, and its 304', async () => {
  const get = await fetch(url());
  expect(get.status).toBe(200);
  const body = await get.text();
  const head = await fetch(url(), { method: 'HEAD' });
  expect(head.status).toBe(200);
  expect(await head.text()).toBe('');
  for (const name of ['content-type', 'cache-control', 'etag', 'vary', 'surrogate-key']) {
    expect(head.headers.get(name), name).toBe(get.headers.get(name));
  }
  expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
  const revalidated = await fetch(url(), { method: 'HEAD', headers: { 'if-none-match': get.headers.get('etag')! } });
  expect(revalidated.status).toBe(304);
  // The GET's stored result answered both.
  expect(fixture.upstream.requests).toHaveLength(1);
  // Logged as the HEADs they were.
  const methods = lines.filter((line) => line.msg === 'request completed').map((line) => [line.method, line.status]);
  expect(methods).toEqual([
    ['GET', 200],
    ['HEAD', 200],
    ['HEAD', 304],
  ]);
});

it('a HEAD of the endpoint without a query is refused as the GET is', async () => {
  const get = await fetch(fixture.facade.url);
  const head = await fetch(fixture.facade.url, { method: 'HEAD' });
  expect(head.status).toBe(get.status);
  expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
  expect(await head.text()).toBe('');
});

it('a 405 names HEAD among the methods served', async () => {
  const put = await fetch(fixture.facade.url, { method: 'PUT' });
  expect(put.status).toBe(405);
  expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
  expect((await put.json()).errors[0].message).toBe('PUT is not served here; send GET, HEAD or POST');
});
