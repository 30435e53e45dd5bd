import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../helpers/demo.ts';

let demo: Awaited<ReturnType<typeof startDemo>>;
beforeAll(async () => {
  demo = await startDemo();
});
afterAll(() => demo.close());

const search = (catalog: string, query = '') => demo.get(`/catalogs/${catalog}/products/search${query}`);
const ids = (body: any): string[] => body.data.map((p: any) => p.productId);

describe('product search', () => {
  it('answers the first page of 10 in productId order by default', async () => {
    const { status, body } = await search('MACHINERY');
    expect(status).toBe(200);
    expect(body.meta).toEqual({
      languageId: null,
      paging: { per_page: 10, page: 0, total_pages: 8, total_items: 72 },
      contentType: 'application/json',
    });
    expect(ids(body)).toEqual([...ids(body)].sort());
    expect(body.data[0]).toMatchObject({
      productId: 'A789-BC-2015',
      catalogId: 'MACHINERY',
      _objectName: 'A789 BC Deep Mining Excavator',
      _objectPreviewURI: expect.stringMatching(/^https:\/\/.+\.webp$/),
      statusId: '700',
      classificationGroupId: 'MC-050202',
      _objectNames: [
        { languageId: 'en', value: 'A789 BC Deep Mining Excavator' },
        { languageId: 'de', value: 'A789 BC Tiefbergbaubagger' },
      ],
    });
  });

  it('names products in German for de and de-DE, in English for en-US and unknown languages', async () => {
    const name = async (lang: string) => (await search('MACHINERY', `?pageSize=1&languageId=${lang}`)).body;
    const de = await name('de-DE');
    expect(de.meta.languageId).toBe('de-DE');
    expect(de.data[0]._objectName).toBe('A789 BC Tiefbergbaubagger');
    expect(de.data[0]._objectNames).toBeUndefined();
    expect((await name('de')).data[0]._objectName).toBe('A789 BC Tiefbergbaubagger');
    expect((await name('en-US')).data[0]._objectName).toBe('A789 BC Deep Mining Excavator');
    expect((await name('fr')).data[0]._objectName).toBe('A789 BC Deep Mining Excavator');
  });

  it('pages: pageSize 1, the last page, and 404 past the end', async () => {
    const first = await search('LIFESTYLE', '?pageSize=1&page=0');
    expect(first.body.meta.paging).toEqual({ per_page: 1, page: 0, total_pages: 115, total_items: 115 });
    const last = await search('LIFESTYLE', '?pageSize=50&page=2');
    expect(last.body.data).toHaveLength(15);
    const past = await search('LIFESTYLE', '?pageSize=50&page=3');
    expect(past).toMatchObject({
      status: 404,
      body: { status: 404, meta: { languageId: null }, error: 'No Products found' },
    });
  });

  it('sorts by +productId, productId, -productId and statusId', async () => {
    const all = async (sorting: string) => ids((await search('MACHINERY', `?pageSize=100&sorting=${sorting}`)).body);
    const asc = await all('%2BproductId');
    expect(asc).toEqual([...asc].sort());
    expect(await all('productId')).toEqual(asc);
    // An unencoded + decodes to a space, which still means ascending.
    expect(await all('+productId')).toEqual(asc);
    expect(await all('-productId')).toEqual([...asc].reverse());
    const byStatus = (await search('MACHINERY', '?pageSize=100&sorting=-statusId,productId')).body.data;
    const statuses = byStatus.map((p: any) => p.statusId);
    expect(statuses).toEqual([...statuses].sort().reverse());
    expect(byStatus[0].statusId).toBe('700');
  });

  it('sorts by name in the requested language', async () => {
    const names = (await search('LIFESTYLE', '?pageSize=200&sorting=_objectName&languageId=de')).body.data.map(
      (p: any) => p._objectName,
    );
    expect(names).toEqual([...names].sort(new Intl.Collator('de').compare));
  });

  it('filters by a group including its descendant groups', async () => {
    const root = await search('MACHINERY', '?pageSize=100&classificationGroupId=MC-050000');
    expect(root.body.meta.paging.total_items).toBe(12);
    expect(root.body.data.every((p: any) => p.classificationGroupId.startsWith('MC-05'))).toBe(true);
    const leaf = await search(
      'MACHINERY',
      '?classificationGroupId=MC-050202&classificationGroupClassificationId=ECLASS-DEMO',
    );
    expect(ids(leaf.body)).toEqual(['A789-BC-2015', 'X456-YZ-2015']);
  });

  it('filters by classification and answers 404 for another one or an unknown group', async () => {
    expect((await search('MACHINERY', '?classificationId=ECLASS-DEMO')).body.meta.paging.total_items).toBe(72);
    const other = await search('MACHINERY', '?classificationId=LIFESTYLE-DEMO');
    expect(other.status).toBe(404);
    expect((await search('MACHINERY', '?classificationGroupId=LS-010000')).status).toBe(404);
  });

  it('answers 404 for an unknown catalog with the documented body', async () => {
    const { status, body } = await search('NOPE', '?languageId=en');
    expect(status).toBe(404);
    expect(body).toEqual({ status: 404, meta: { languageId: 'en' }, error: 'No Products found' });
  });

  it.each(['page=-1', 'page=x', 'page=1.5', 'pageSize=0', 'pageSize=', 'sorting=price', 'sorting=productId,'])(
    'answers 400 for %s',
    async (query) => {
      const { status, body } = await search('MACHINERY', `?${query}`);
      expect(status).toBe(400);
      expect(body).toMatchObject({ status: 400, meta: { languageId: null }, error: expect.any(String) });
    },
  );
});
