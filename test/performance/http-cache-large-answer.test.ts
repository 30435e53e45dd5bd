import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// docs/configuration.md: PIM_CACHE_MAX_BYTES bounds the HTTP cache; a quarter goes to the entries' keys and headers,
// the rest to the bodies (787,456 bytes of a 1 MiB bound). undici's MemoryCacheStore, written past its maxSize, evicts
// the oldest entries down to half its size, keeping the one just written: an answer larger than that half (under
// PIM_MAX_BODY_BYTES) alone passes the target, and one larger than the whole part is then dropped too. Each such
// answer emptied the cache, and every caller's next call went to the PIM again; one larger than a quarter left the
// others next to nothing. (No cache of results: each repeat calls.)
const sizeOf = (url: string) => Number(new URL(url, 'http://x').pathname.split('/')[5]);
const fixture = useFacade({ PIM_CACHE_MAX_BYTES: String(1024 * 1024), RESPONSE_CACHE_MAX_BYTES: '0' }, (req, res) => {
  const page = JSON.stringify({ status: 200, meta: {}, data: [{ text: 'x'.repeat(sizeOf(req.url!)) }] });
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(page);
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
const products = (size: number) => `{ catalogProducts(catalogId: "${size}") }`;

describe('PIM_CACHE_MAX_BYTES=1 MiB', () => {
  it.each([
    ['larger than the bodies part', 900_000, [1_000, 2_000, 3_000]],
    ['larger than half the bodies part', 500_000, [1_001, 2_001, 3_001, 190_000]],
    // Stored, it would leave the others 43 KB of the half undici evicts down to.
    ['larger than a quarter of the bodies part', 350_000, [1_002, 2_002, 3_002, 150_000, 160_000, 170_000]],
  ])('an answer %s leaves the answers kept alone', async (_name, size, kept) => {
    for (const each of kept) expect((await fixture.facade.post(products(each))).status).toBe(200);
    await settle();
    const large = await fixture.facade.post(products(size));
    expect(large.body.data.catalogProducts.data[0].text).toHaveLength(size);
    await settle();
    fixture.upstream.reset();
    for (const each of kept) expect((await fixture.facade.post(products(each))).status).toBe(200);
    // Served from the cache, as before the large answer came.
    expect(fixture.upstream.requests.map((r) => sizeOf(r.url))).toEqual([]);
  });
});
