import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

const fixture = useFacade();

const gql = (query: string, variables: Record<string, unknown>) => fixture.facade.post(query, variables);

/** Each id argument, how to query it, and where the id must land in the one upstream request. */
const idArguments: Array<[string, (v: string) => string, (encoded: string) => string]> = [
  ['catalogId', (v) => `catalogProducts(catalogId: ${v})`, (e) => `/pxm/pimapi/v1/catalogs/${e}/products/search`],
  [
    'classificationId (search)',
    (v) => `catalogProducts(catalogId: "c", classificationId: ${v})`,
    (e) => `/pxm/pimapi/v1/catalogs/c/products/search?classificationId=${e}`,
  ],
  [
    'classificationGroupClassificationId',
    (v) => `catalogProducts(catalogId: "c", classificationGroupClassificationId: ${v})`,
    (e) => `/pxm/pimapi/v1/catalogs/c/products/search?classificationGroupClassificationId=${e}`,
  ],
  [
    'classificationGroupId (search)',
    (v) => `catalogProducts(catalogId: "c", classificationGroupId: ${v})`,
    (e) => `/pxm/pimapi/v1/catalogs/c/products/search?classificationGroupId=${e}`,
  ],
  [
    'classificationId (group)',
    (v) => `classificationGroup(classificationId: ${v}, classificationGroupId: "g")`,
    (e) => `/pxm/pimapi/v1/classifications/${e}/groups/g`,
  ],
  [
    'classificationGroupId (group)',
    (v) => `classificationGroup(classificationId: "c", classificationGroupId: ${v})`,
    (e) => `/pxm/pimapi/v1/classifications/c/groups/${e}`,
  ],
  [
    'classificationId (groups)',
    (v) => `classificationGroups(classificationId: ${v})`,
    (e) => `/pxm/pimapi/v1/classifications/${e}/groups`,
  ],
];

describe('ids can never steer the upstream request', () => {
  const refused = ['..', '.', 'a\u0000b', 'a\r\nb', 'x'.repeat(10_000)];
  const rows = idArguments.flatMap(([name, field]) =>
    refused.map((id) => [name, JSON.stringify(id).slice(0, 12), field, id] as const),
  );
  it.each(rows)('%s = %s is refused with no upstream call', async (_name, _shown, field, id) => {
    const { status, body } = await gql(`query($id: ID!) { r: ${field('$id')} }`, { id });
    expect(status).toBe(200);
    expect(body.data).toEqual({ r: null });
    expect(body.errors.map((e: any) => e.extensions.code)).toEqual(['BAD_USER_INPUT']);
    expect(fixture.upstream.requests).toEqual([]);
  });

  const encoded: Array<[string, string]> = [
    ['a/b?c#d%e', 'a%2Fb%3Fc%23d%25e'],
    ['http://evil.example/x?y=1', 'http%3A%2F%2Fevil.example%2Fx%3Fy%3D1'],
    ['%2e%2e', '%252e%252e'],
    ['..%2F..%2Fadmin', '..%252F..%252Fadmin'],
  ];
  const sentRows = idArguments.flatMap(([name, field, url]) =>
    encoded.map(([id, e]) => [name, id, field, url(e)] as const),
  );
  it.each(sentRows)('%s = %s travels percent-encoded in its own segment', async (_name, id, field, url) => {
    const { status, body } = await gql(`query($id: ID!) { r: ${field('$id')} }`, { id });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(fixture.upstream.requests.map((r) => r.url)).toEqual([url]);
  });
});
