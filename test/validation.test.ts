import { describe, expect, it } from 'vitest';
import { startFacade, useFacade } from './helpers/facade.ts';

const fixture = useFacade({ MAX_PAGE_SIZE: '50', MAX_ID_LENGTH: '16' });

const search = (args: string) => `catalogProducts(catalogId: "c1", ${args})`;
const group = (args: string) => `classificationGroup(classificationId: "E", classificationGroupId: "g", ${args})`;
const groups = (args: string) => `classificationGroups(classificationId: "E", ${args})`;

// Each row: a field call, the argument named in the error.
const rejected: Array<[string, string]> = [
  [search('page: -1'), 'page'],
  [groups('page: -1'), 'page'],
  [search('pageSize: 0'), 'pageSize'],
  [groups('pageSize: -5'), 'pageSize'],
  [search('pageSize: 51'), 'pageSize'],
  [group('levels: -1'), 'levels'],
  [search('sorting: ""'), 'sorting'],
  [search('sorting: "++productId"'), 'sorting'],
  [search('sorting: "productId desc"'), 'sorting'],
  [search('sorting: "productId;drop"'), 'sorting'],
  [search('sorting: "+productId,"'), 'sorting'],
  [search('languageId: ""'), 'languageId'],
  [search('languageId: "german!"'), 'languageId'],
  [search('languageId: "de/../en"'), 'languageId'],
  ['catalogProducts(catalogId: "")', 'catalogId'],
  ['catalogProducts(catalogId: ".")', 'catalogId'],
  ['catalogProducts(catalogId: "..")', 'catalogId'],
  ['catalogProducts(catalogId: "abcdefghijklmnopq")', 'catalogId'],
  // 17 characters, each two UTF-16 units.
  [`catalogProducts(catalogId: "${'\u{1F600}'.repeat(17)}")`, 'catalogId'],
  ['catalogProducts(catalogId: "a\\u0000b")', 'catalogId'],
  ['catalogProducts(catalogId: "a\\r\\nX-Injected: 1")', 'catalogId'],
  ['catalogProducts(catalogId: "tab\\there")', 'catalogId'],
  [search(`sorting: "${'productId,'.repeat(30)}statusId"`), 'sorting'],
  [search(`languageId: "de${'-abcdefgh'.repeat(5)}"`), 'languageId'],
  [search('classificationId: ".."'), 'classificationId'],
  [search('classificationGroupClassificationId: ""'), 'classificationGroupClassificationId'],
  [search('classificationGroupId: "\\u007f"'), 'classificationGroupId'],
  ['classificationGroup(classificationId: "..", classificationGroupId: "g")', 'classificationId'],
  ['classificationGroup(classificationId: "E", classificationGroupId: ".")', 'classificationGroupId'],
  ['classificationGroups(classificationId: "")', 'classificationId'],
];

describe('input checks', () => {
  it.each(rejected)('%s is refused before any upstream call', async (field, argument) => {
    const { status, body } = await fixture.facade.post(
      `{ ok: classificationGroups(classificationId: "E") bad: ${field} }`,
    );
    expect(status).toBe(200);
    expect(body.data).toEqual({ ok: expect.any(Object), bad: null });
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({ path: ['bad'], extensions: { code: 'BAD_USER_INPUT' } });
    expect(body.errors?.[0]?.message).toContain(`"${argument}"`);
    // Only the valid sibling field reached the PIM.
    expect(fixture.upstream.requests.map((r) => r.url)).toEqual(['/pxm/pimapi/v1/classifications/E/groups']);
  });

  it.each([
    search('languageId: "de", page: 0, pageSize: 50, sorting: "-statusId,productId"'),
    search('languageId: "en"'),
    search('languageId: "de-DE"'),
    // The interface types languageId as a plain string: tags past the common shape, and ids a PIM may number.
    search('languageId: "en-US-x-twain"'),
    search('languageId: "i-klingon"'),
    search('languageId: "1"'),
    search('languageId: "d"'),
    group('levels: 0'),
    'catalogProducts(catalogId: "abcdefghijklmnop")',
    // MAX_ID_LENGTH counts characters, as its message says: 16 emoji are 16, not the 32 UTF-16 units they take.
    `catalogProducts(catalogId: "${'\u{1F600}'.repeat(16)}")`,
  ])('%s passes', async (field) => {
    const { body } = await fixture.facade.post(`{ ${field} }`);
    expect(body.errors).toBeUndefined();
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('refuses an id holding a lone surrogate (only variables can carry one)', async () => {
    const { body } = await fixture.facade.post('query($id: ID!) { catalogProducts(catalogId: $id) }', {
      id: 'a\ud800b',
    });
    expect(body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(fixture.upstream.requests).toHaveLength(0);
  });

  // graphql-js 16 finds no such rule of its own: it answered `data: null` and an error without a code, as if
  // execution had started (the GraphQL spec's "operation type existence" is a validation rule).
  it.each(['mutation { x }', 'subscription { x }'])(
    'refuses `%s` in validation: the schema has only queries',
    async (document) => {
      const { status, body } = await fixture.facade.post(document, {}, { accept: 'application/graphql-response+json' });
      expect(status).toBe(400);
      expect(body).not.toHaveProperty('data');
      expect(body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(fixture.upstream.requests).toHaveLength(0);
    },
  );

  it('refuses an out-of-range Int in GraphQL validation, with no upstream call', async () => {
    const { body } = await fixture.facade.post(`{ ${search('page: 2147483648')} }`);
    expect(body.errors?.[0]?.message).toMatch(/Int cannot represent/);
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});
