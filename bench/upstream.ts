import type { RequestListener } from 'node:http';

/** Catalog ids starting with this answer `Cache-Control: max-age=60`; all others `no-store`. */
export const CACHEABLE_PREFIX = 'zipf-';

// About 265 bytes per product, so a page of 64 is a body of about 17 KB. Built once, the id spliced in.
const ID = '@ID@';
const products = Array.from({ length: 200 }, (_, i) =>
  JSON.stringify({
    productId: `${ID}-P${String(i).padStart(4, '0')}`,
    statusId: 'RELEASED',
    name: { en: `Compact track loader, model ${i}` },
    description: { en: 'Rubber tracks, 2.1 m bucket, 55 kW diesel engine, enclosed cab with heating.' },
    classificationGroups: [{ classificationId: 'ECLASS-DEMO', classificationGroupId: 'MC-010000' }],
  }).split(ID),
);

/**
 * The PIM's product search for any catalog id: `pageSize` synthetic products of that catalog,
 * in the REST envelope, answered at once. Anything else is a 404. Counts every request served.
 */
export function createBenchUpstream(): RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    const match = /^\/pxm\/pimapi\/v1\/catalogs\/([^/]+)\/products\/search$/.exec(url.pathname);
    if (!match) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404}');
    const catalogId = decodeURIComponent(match[1]!);
    const size = Math.min(Number(url.searchParams.get('pageSize') ?? 20), 200);
    const id = JSON.stringify(catalogId).slice(1, -1);
    const data = products
      .slice(0, size)
      .map((parts) => parts.join(id))
      .join(',');
    const languageId = JSON.stringify(url.searchParams.get('languageId'));
    const paging = `{"per_page":${size},"page":0,"total_pages":1,"total_items":${size}}`;
    const body = `{"status":200,"meta":{"languageId":${languageId},"paging":${paging}},"data":[${data}]}`;
    res
      .writeHead(200, {
        'content-type': 'application/json',
        'cache-control': catalogId.startsWith(CACHEABLE_PREFIX) ? 'max-age=60' : 'no-store',
      })
      .end(body);
  };
}

/** An OTLP/HTTP collector that accepts every export and keeps nothing. */
export function createCollectorStub(): RequestListener {
  return (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  };
}
