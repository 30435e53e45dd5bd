import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, fetchExchange } from '@urql/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// Every limit at its default, behind the hardened node:http server: the common clients still work.
let upstream: Upstream;
let facade: Facade;
const methods: string[] = [];
beforeAll(async () => {
  upstream = await startUpstream();
  facade = await startFacade(upstream.url);
  facade.server.on('request', (req) => methods.push(req.method ?? ''));
});
beforeEach(() => {
  upstream.reset();
  methods.length = 0;
});
afterAll(async () => {
  await facade.close();
  await upstream.close();
});

const overview = gql`
  query Overview($catalogId: ID!) {
    products: catalogProducts(catalogId: $catalogId, pageSize: 5)
    groups: classificationGroups(classificationId: "E", pageSize: 5)
    group: classificationGroup(classificationId: "E", classificationGroupId: "G", levels: 1)
  }
`;
const urls = [
  '/pxm/pimapi/v1/catalogs/C1/products/search?pageSize=5',
  '/pxm/pimapi/v1/classifications/E/groups/G?levels=1',
  '/pxm/pimapi/v1/classifications/E/groups?pageSize=5',
];

describe('clients with default settings against the default limits', () => {
  it('Apollo Client (POST)', async () => {
    const client = new ApolloClient({
      link: new HttpLink({ uri: facade.url }),
      cache: new InMemoryCache(),
    });
    const { data, error } = await client.query({
      query: overview,
      variables: { catalogId: 'C1' },
      fetchPolicy: 'no-cache',
    });
    expect(error).toBeUndefined();
    expect(methods).toEqual(['POST']);
    expect(Object.keys(data as object).sort()).toEqual(['group', 'groups', 'products']);
    expect(upstream.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
    expect(upstream.requests.map((r) => r.url).sort()).toEqual(urls);
  });

  it('urql (GET)', async () => {
    const client = new Client({ url: facade.url, exchanges: [fetchExchange] });
    const result = await client.query(overview, { catalogId: 'C1' }).toPromise();
    expect(result.error).toBeUndefined();
    expect(methods).toEqual(['GET']);
    expect(Object.keys(result.data).sort()).toEqual(['group', 'groups', 'products']);
    expect(upstream.requests.map((r) => r.url).sort()).toEqual(urls);
  });
});
