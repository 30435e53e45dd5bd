import { readdirSync, readFileSync } from 'node:fs';
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { Client, fetchExchange } from '@urql/core';
import { parse, validate } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CatalogOverviewDocument,
  CatalogProductsDocument,
  DeferredProductsDocument,
} from '../../examples/gql/graphql.ts';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

const overview = { catalogId: 'MACHINERY', classificationId: 'ECLASS-DEMO', groupId: 'MC-050200', languageId: 'en' };
const deferred = { catalogId: 'MACHINERY', classificationId: 'ECLASS-DEMO', groupId: 'MC-050200' };

let upstream: DemoUpstream;
let server: Facade;
/** HTTP methods of the requests the server received, in order. */
const methods: string[] = [];
beforeAll(async () => {
  upstream = await startDemoUpstream();
  // No HTTP cache: every operation must reach the recording upstream.
  server = await startFacade(upstream.url, { PIM_CACHE: 'false' });
  server.server.on('request', (req) => methods.push(req.method ?? ''));
});
const teardown: Array<() => void> = [];
afterAll(async () => {
  for (const unsubscribe of teardown) unsubscribe();
  await server?.close();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

it('every example operation the clients use is valid against the schema the server runs', () => {
  const dir = new URL('../../examples/', import.meta.url);
  const files = readdirSync(dir).filter((name) => name.endsWith('.graphql'));
  expect(files.length).toBeGreaterThanOrEqual(5);
  // The schema as served: Yoga's defer/stream plugin adds @defer to the built one.
  const { schema: served } = server.app.yoga.getEnveloped({});
  for (const file of files) expect(validate(served, parse(readFileSync(new URL(file, dir), 'utf8'))), file).toEqual([]);
});

/** Asserts every upstream call of the last operation carried the client's key and a request id. */
function expectForwardedKey(key: string) {
  expect(upstream.requests.length).toBeGreaterThan(0);
  for (const request of upstream.requests) {
    expect(request.headers['x-api-key']).toBe(key);
    expect(request.headers['x-request-id']).toMatch(/^[\w.:-]+$/);
  }
}

describe('Apollo Client (core, HttpLink)', () => {
  const noCache = { fetchPolicy: 'no-cache', errorPolicy: 'all' } as const;
  const client = () =>
    new ApolloClient({
      link: new HttpLink({ uri: server.url, headers: { 'X-API-KEY': 'apollo-key' } }),
      cache: new InMemoryCache(),
      incrementalHandler: new Defer20220824Handler(),
    });

  it('runs all three fields in one operation with variables and forwards X-API-KEY', async () => {
    const { data, error } = await client().query({ query: CatalogOverviewDocument, variables: overview, ...noCache });
    expect(error).toBeUndefined();
    expect(data?.products).toMatchObject({ status: 200, data: expect.arrayContaining([expect.any(Object)]) });
    expect(data?.group).toMatchObject({ status: 200, data: expect.arrayContaining([expect.any(Object)]) });
    expect(data?.groups).toMatchObject({ status: 200 });
    expect(upstream.requests).toHaveLength(3);
    expectForwardedKey('apollo-key');
  });

  it('returns partial data with the contract error code', async () => {
    const { data, error } = await client().query({
      query: CatalogOverviewDocument,
      variables: { ...overview, catalogId: 'NO-SUCH-CATALOG' },
      ...noCache,
    });
    expect(data?.products).toBeNull();
    expect(data?.groups).toMatchObject({ status: 200 });
    expect(CombinedGraphQLErrors.is(error)).toBe(true);
    expect((error as CombinedGraphQLErrors).errors).toMatchObject([
      { path: ['products'], extensions: { code: 'NOT_FOUND', upstream: { status: 404 } } },
    ]);
  });

  it('receives the @defer part after the initial part', async () => {
    upstream.hold();
    const seen: unknown[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const subscription = client()
        .watchQuery({ query: DeferredProductsDocument, variables: deferred, fetchPolicy: 'no-cache' })
        .subscribe({
          next: ({ data, dataState }) => {
            if (!data) return;
            seen.push(data);
            // The group is there and the product search is still held upstream: let it go.
            if (!('catalogProducts' in data)) upstream.release();
            else if (dataState === 'complete') (subscription.unsubscribe(), resolve());
          },
          error: reject,
        });
    });
    await done;
    expect(seen[0]).toMatchObject({ classificationGroup: { status: 200 } });
    expect(seen[0]).not.toHaveProperty('catalogProducts');
    expect(seen.at(-1)).toMatchObject({ classificationGroup: { status: 200 }, catalogProducts: { status: 200 } });
  });
});

describe('urql (@urql/core, default settings)', () => {
  const client = () =>
    new Client({
      url: server.url,
      exchanges: [fetchExchange],
      fetchOptions: { headers: { 'X-API-KEY': 'urql-key' } },
    });

  it('sends queries as GET with variables and forwards X-API-KEY', async () => {
    const result = await client().query(CatalogProductsDocument, {
      catalogId: 'MACHINERY',
      groupId: 'MC-050200',
      sorting: '+productId',
      pageSize: 2,
    });
    expect(result.error).toBeUndefined();
    expect(result.data?.catalogProducts).toMatchObject({ status: 200, data: [expect.any(Object), expect.any(Object)] });
    expect(methods.at(-1)).toBe('GET');
    expectForwardedKey('urql-key');
  });

  it('runs all three fields in one operation and reports partial data with error codes', async () => {
    const ok = await client().query(CatalogOverviewDocument, overview);
    expect(ok.error).toBeUndefined();
    expect(Object.keys(ok.data ?? {}).sort()).toEqual(['group', 'groups', 'products']);
    const partial = await client().query(CatalogOverviewDocument, { ...overview, groupId: 'NO-SUCH-GROUP' });
    expect(partial.data?.groups).toMatchObject({ status: 200 });
    expect(partial.data?.group).toBeNull();
    expect(partial.error?.graphQLErrors.map((e) => [e.path?.[0], e.extensions.code])).toContainEqual([
      'group',
      'NOT_FOUND',
    ]);
  });

  it('receives the @defer part over a multipart response', async () => {
    upstream.hold();
    const parts: Array<{ data: unknown; hasNext: boolean }> = [];
    await new Promise<void>((resolve, reject) => {
      const { unsubscribe } = client()
        .query(DeferredProductsDocument, deferred)
        .subscribe((result) => {
          if (result.error) return reject(result.error);
          parts.push({ data: result.data, hasNext: result.hasNext });
          if (result.hasNext) upstream.release();
          else resolve();
        });
      // Unsubscribing while urql still reads the closing boundary would abort that read.
      teardown.push(unsubscribe);
    });
    expect(parts[0]).toMatchObject({ hasNext: true, data: { classificationGroup: { status: 200 } } });
    expect(parts[0]!.data).not.toHaveProperty('catalogProducts');
    expect(parts.at(-1)).toMatchObject({ hasNext: false, data: { catalogProducts: { status: 200 } } });
  });
});
