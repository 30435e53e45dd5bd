import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../helpers/demo.ts';

let demo: Awaited<ReturnType<typeof startDemo>>;
beforeAll(async () => {
  demo = await startDemo();
});
afterAll(() => demo.close());

describe('demo service transport', () => {
  it('decodes each path segment on its own', async () => {
    const encoded = await demo.get('/classifications/ECLASS%2DDEMO/groups/MC%2D050000');
    expect(encoded.body.data[0].classificationGroupId).toBe('MC-050000');
    // %2F stays inside the id, so this is catalog "MACHINERY/x", not a longer path.
    const slash = await demo.get('/catalogs/MACHINERY%2Fx/products/search');
    expect(slash.body).toEqual({ status: 404, meta: { languageId: null }, error: 'No Products found' });
  });

  it('sends JSON that is cacheable for 60 s with an ETag, and 304 on revalidation', async () => {
    const path = '/catalogs/MACHINERY/products/search?pageSize=3&languageId=de';
    const a = await demo.get(path);
    const b = await demo.get(path);
    expect(a.text).toBe(b.text);
    expect(a.headers.get('content-type')).toMatch(/^application\/json/);
    expect(a.headers.get('cache-control')).toBe('max-age=60');
    const etag = a.headers.get('etag')!;
    expect(etag).toBe(b.headers.get('etag'));
    const revalidated = await demo.get(path, { headers: { 'if-none-match': etag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.text).toBe('');
  });

  it('answers 405 with the error envelope for other methods', async () => {
    const res = await demo.get('/catalogs/MACHINERY/products/search', { method: 'POST', body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.body).toMatchObject({ status: 405, error: expect.any(String) });
  });

  it('answers 404 with the envelope for unknown routes, uncached errors for 400', async () => {
    const res = await demo.get('/catalogs/MACHINERY/products');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: 404, meta: { languageId: null } });
    const bad = await demo.get('/catalogs/MACHINERY/products/search?page=-1');
    expect(bad.headers.get('cache-control')).toBe('no-store');
  });
});
