import { describe, expect, it } from 'vitest';
import { startFacade, useFacade } from '../helpers/facade.ts';

const fixture = useFacade();

const P = '/pxm/pimapi/v1';

// Each row: a GraphQL field call and the exact request-target the upstream must receive.
const cases: Array<[string, string]> = [
  ['catalogProducts(catalogId: "MACHINES")', `${P}/catalogs/MACHINES/products/search`],
  [
    'catalogProducts(catalogId: "c1", classificationId: "ECLASS", classificationGroupClassificationId: "ECLASS", classificationGroupId: "27-01", languageId: "de", sorting: "+productId", page: 0, pageSize: 25)',
    `${P}/catalogs/c1/products/search?classificationId=ECLASS&classificationGroupClassificationId=ECLASS&classificationGroupId=27-01&languageId=de&sorting=%2BproductId&page=0&pageSize=25`,
  ],
  ['catalogProducts(catalogId: "c1", sorting: "-statusId")', `${P}/catalogs/c1/products/search?sorting=-statusId`],
  [
    'catalogProducts(catalogId: "c1", sorting: "statusId,+productId")',
    `${P}/catalogs/c1/products/search?sorting=statusId%2C%2BproductId`,
  ],
  ['catalogProducts(catalogId: "c1", page: 3, languageId: null)', `${P}/catalogs/c1/products/search?page=3`],
  ['catalogProducts(catalogId: "c1", languageId: "de-DE")', `${P}/catalogs/c1/products/search?languageId=de-DE`],
  [
    'classificationGroup(classificationId: "ECLASS", classificationGroupId: "27")',
    `${P}/classifications/ECLASS/groups/27`,
  ],
  [
    'classificationGroup(classificationId: "ECLASS", classificationGroupId: "27", levels: 0)',
    `${P}/classifications/ECLASS/groups/27?levels=0`,
  ],
  [
    'classificationGroup(classificationId: "ECLASS", classificationGroupId: "27", levels: 2, languageId: "en")',
    `${P}/classifications/ECLASS/groups/27?levels=2&languageId=en`,
  ],
  [
    'classificationGroup(classificationId: "ECLASS", classificationGroupId: "27", levels: null)',
    `${P}/classifications/ECLASS/groups/27`,
  ],
  ['classificationGroups(classificationId: "ECLASS")', `${P}/classifications/ECLASS/groups`],
  [
    'classificationGroups(classificationId: "ECLASS", languageId: "en", page: 1, pageSize: 1)',
    `${P}/classifications/ECLASS/groups?languageId=en&page=1&pageSize=1`,
  ],
  // Awkward ids stay inside their own path segment.
  [
    'classificationGroup(classificationId: "a/b", classificationGroupId: "x?y#z")',
    `${P}/classifications/a%2Fb/groups/x%3Fy%23z`,
  ],
  [
    'catalogProducts(catalogId: "ü", classificationGroupId: "%")',
    `${P}/catalogs/%C3%BC/products/search?classificationGroupId=%25`,
  ],
  [
    'catalogProducts(catalogId: "100%", classificationId: "a&b=c")',
    `${P}/catalogs/100%25/products/search?classificationId=a%26b%3Dc`,
  ],
  [
    'catalogProducts(catalogId: "http://evil.example/x")',
    `${P}/catalogs/http%3A%2F%2Fevil.example%2Fx/products/search`,
  ],
  ['classificationGroups(classificationId: "...")', `${P}/classifications/.../groups`],
  ['classificationGroups(classificationId: "with space")', `${P}/classifications/with%20space/groups`],
  // Sent as written: undici's URL parser would encode a query's `'` itself, unlike the key and tags built here.
  [
    `catalogProducts(catalogId: "O'Neil", classificationId: "it's(1)*!")`,
    `${P}/catalogs/O%27Neil/products/search?classificationId=it%27s%281%29%2A%21`,
  ],
];

describe('GraphQL arguments become exactly one REST request', () => {
  it.each(cases)('%s', async (field, target) => {
    const { status, body } = await fixture.facade.post(`{ result: ${field} }`);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(fixture.upstream.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`GET ${target}`]);
    // The field's value is the upstream body, unchanged.
    expect(body.data?.result).toEqual({ status: 200, meta: { languageId: null }, data: [{ url: target }] });
  });

  it('passes variables through the same way', async () => {
    const { body } = await fixture.facade.post(
      'query($c: ID!, $s: String, $p: Int) { catalogProducts(catalogId: $c, sorting: $s, page: $p) }',
      { c: 'c/1', s: '+productId', p: 0 },
    );
    expect(body.errors).toBeUndefined();
    expect(fixture.upstream.requests.map((r) => r.url)).toEqual([
      `${P}/catalogs/c%2F1/products/search?sorting=%2BproductId&page=0`,
    ]);
  });
});

describe('headers sent upstream', () => {
  const products = '{ catalogProducts(catalogId: "c1") }';

  it('sends Accept: application/json and no credentials when none are known', async () => {
    await fixture.facade.post(products);
    const [seen] = fixture.upstream.requests;
    expect(seen?.headers.accept).toBe('application/json');
    expect(seen?.headers['x-api-key']).toBeUndefined();
    expect(seen?.headers.authorization).toBeUndefined();
  });

  it("forwards the caller's X-API-KEY and Authorization as they are", async () => {
    await fixture.facade.post(products, undefined, {
      'x-api-key': 'caller-key',
      authorization: 'Bearer abc',
      cookie: 'session=1',
    });
    const [seen] = fixture.upstream.requests;
    expect(seen?.headers['x-api-key']).toBe('caller-key');
    expect(seen?.headers.authorization).toBe('Bearer abc');
    expect(seen?.headers.cookie).toBeUndefined();
  });

  it('uses PIM_API_KEY only when the caller sent no key', async () => {
    const keyed = await startFacade(fixture.upstream.url, { PIM_API_KEY: 'server-key' });
    await keyed.post(products);
    await keyed.post(products, undefined, { 'x-api-key': 'caller-key' });
    await keyed.close();
    expect(fixture.upstream.requests.map((r) => r.headers['x-api-key'])).toEqual(['server-key', 'caller-key']);
  });

  it('forwards only the configured headers', async () => {
    const custom = await startFacade(fixture.upstream.url, { PIM_FORWARD_HEADERS: 'X-Tenant' });
    await custom.post(products, undefined, { 'x-tenant': 't1', 'x-api-key': 'caller-key' });
    await custom.close();
    expect(fixture.upstream.requests[0]?.headers['x-tenant']).toBe('t1');
    expect(fixture.upstream.requests[0]?.headers['x-api-key']).toBeUndefined();
  });
});

describe('base URL with a path prefix', () => {
  it('keeps the prefix in front of /pxm', async () => {
    const prefixed = await startFacade(`${fixture.upstream.url}/gateway/`);
    await prefixed.post('{ classificationGroups(classificationId: "E") }');
    await prefixed.close();
    expect(fixture.upstream.requests.map((r) => r.url)).toEqual([`/gateway${P}/classifications/E/groups`]);
  });
});
