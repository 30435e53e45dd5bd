import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../helpers/demo.ts';

let demo: Awaited<ReturnType<typeof startDemo>>;
beforeAll(async () => {
  demo = await startDemo();
});
afterAll(() => demo.close());

const group = (id: string, query = '') => demo.get(`/classifications/ECLASS-DEMO/groups/${id}${query}`);
const ids = (body: any): string[] => body.data.map((g: any) => g.classificationGroupId);

describe('reading a classification group', () => {
  it('leaves out a description the data lacks instead of sending an entry without a value', async () => {
    const { body } = await demo.get('/classifications/LIFESTYLE-DEMO/groups/LS-010000?languageId=en');
    expect(body.data[0].longDescriptions).toEqual([]);
    const all = await demo.get('/classifications/LIFESTYLE-DEMO/groups/LS-010000');
    expect(all.body.data[0].longDescriptions).toEqual([]);
    expect(all.body.data[0].shortDescription).toEqual([
      { languageId: 'en', value: 'Home Decor' },
      { languageId: 'de', value: 'Dekoration' },
    ]);
  });

  it('returns only the group when levels is absent, as the documented record', async () => {
    const { status, body } = await group('MC-050000', '?languageId=de');
    expect(status).toBe(200);
    expect(body.meta).toEqual({ languageId: 'de', contentType: 'application/json' });
    expect(body.data).toEqual([
      {
        classificationGroupId: 'MC-050000',
        classificationId: 'ECLASS-DEMO',
        hierarchyCode: '050000',
        shortDescription: [{ languageId: 'de', value: 'Bagger' }],
        longDescriptions: [{ languageId: 'de', value: 'Bagger für den Einsatz in groß angelegten Betrieb' }],
        fallbackDescShort: 'Excavators',
        orderNo: 170,
        statusID: '400',
        attributes: [],
        createdOn: '2023-03-26T12:32:00.000Z',
        createdBy: 'pxm.import',
        changedOn: '2024-06-14T12:26:00.000Z',
        changedBy: 'catalog.manager',
      },
    ]);
  });

  it('levels=1 adds the children, levels=2 and 0 the whole branch depth-first', async () => {
    expect(ids((await group('MC-050000', '?levels=1')).body)).toEqual(['MC-050000', 'MC-050100', 'MC-050200']);
    const whole = [
      'MC-050000',
      'MC-050100',
      'MC-050101',
      'MC-050102',
      'MC-050103',
      'MC-050200',
      'MC-050201',
      'MC-050202',
      'MC-050203',
    ];
    expect(ids((await group('MC-050000', '?levels=2')).body)).toEqual(whole);
    const all = (await group('MC-050000', '?levels=0')).body;
    expect(ids(all)).toEqual(whole);
    expect(all.data[1].parentClassificationGroupId).toBe('MC-050000');
    expect(all.data[2].parentClassificationGroupId).toBe('MC-050100');
    expect(all.data[0]).not.toHaveProperty('parentClassificationGroupId');
  });

  it('gives all translations without languageId and English for en-US', async () => {
    const all = (await group('MC-050100')).body.data[0];
    expect(all.shortDescription).toEqual([
      { languageId: 'en', value: 'Wheeled Excavators' },
      { languageId: 'de', value: 'Großradbagger' },
    ]);
    const en = (await group('MC-050100', '?languageId=en-US')).body.data[0];
    expect(en.shortDescription).toEqual([{ languageId: 'en', value: 'Wheeled Excavators' }]);
  });

  it('answers 404 for an unknown group or classification, 400 for bad levels', async () => {
    const missing = await group('MC-999999', '?languageId=de');
    expect(missing).toMatchObject({
      status: 404,
      body: { status: 404, meta: { languageId: 'de' }, error: 'No Classification found' },
    });
    expect((await demo.get('/classifications/NOPE/groups/MC-050000')).status).toBe(404);
    expect((await group('MC-050000', '?levels=-1')).status).toBe(400);
    expect((await group('MC-050000', '?levels=one')).status).toBe(400);
  });

  // The interface's levels is an int32, and paging has no maximum: the façade forwards any of them.
  it('takes levels up to the largest int32 as "that many levels", and pages far past the end as empty', async () => {
    const deepest = await group('MC-050000', '?levels=2147483647');
    expect(deepest.status).toBe(200);
    expect(deepest.body.data).toEqual((await group('MC-050000', '?levels=0')).body.data);
    const far = await demo.get('/classifications/ECLASS-DEMO/groups?page=1000000000&pageSize=2147483647');
    expect(far).toMatchObject({ status: 404, body: { error: 'No Classification found' } });
    expect((await group('MC-050000', '?levels=2147483648')).status).toBe(400);
  });
});

describe('listing the groups of a classification', () => {
  it('pages in orderNo order with sorting and links', async () => {
    const { body } = await demo.get('/classifications/ECLASS-DEMO/groups?pageSize=5&page=1');
    expect(body.meta.paging).toMatchObject({
      per_page: 5,
      page: 1,
      total_pages: 9,
      total_items: 42,
      sorting: 'OrderNo: ASC',
    });
    expect(body.meta.paging.links.next).toMatch(/\/classifications\/ECLASS-DEMO\/groups\?pageSize=5&page=2$/);
    expect(body.data.map((g: any) => g.orderNo)).toEqual([60, 70, 80, 90, 100]);
  });

  it('uses a default page size of 10 and answers 404 past the last page', async () => {
    const first = await demo.get('/classifications/LIFESTYLE-DEMO/groups');
    expect(first.body.data).toHaveLength(10);
    expect(first.body.meta.paging.links).not.toHaveProperty('prev');
    const last = await demo.get('/classifications/LIFESTYLE-DEMO/groups?page=2');
    expect(last.body.data).toHaveLength(9);
    expect(last.body.meta.paging.links).not.toHaveProperty('next');
    const past = await demo.get('/classifications/LIFESTYLE-DEMO/groups?page=3');
    expect(past.body).toEqual({ status: 404, meta: { languageId: null }, error: 'No Classification found' });
    expect((await demo.get('/classifications/LIFESTYLE-DEMO/groups?pageSize=0')).status).toBe(400);
  });
});
