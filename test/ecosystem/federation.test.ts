import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices as composeWithApollo } from '@apollo/composition';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices as composeWithGuild } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readSubgraphSdl } from '../../src/schema/federation.ts';
import { schema } from '../../src/schema/index.ts';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// A second subgraph owned by another team: sales channels, which know the catalog a channel sells
// and the classification group of each product, and reference the PIM's entities by their keys. Its
// SDL, and a client's query through the gateway, are the ones docs/integration.md shows.
const integrationDoc = readFileSync(new URL('../../docs/integration.md', import.meta.url), 'utf8');
const documented = [...integrationDoc.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
const storefrontTypeDefs = parse(documented.find((block) => block.startsWith('extend schema'))!);
const documentedQuery = documented.find((block) => block.startsWith('{\n  channel('))!;

const lifestyleGroups = ['LS-010000', 'LS-010100', 'LS-010200', 'LS-010201', 'LS-010202'].flatMap((id) => [
  id,
  id.replace('LS-01', 'LS-02'),
]);

/** Channels by id: the catalog and classification each sells, and the group id of each product. */
const channels: Record<string, { catalogId: string; classificationId: string; groupIds: string[] }> = {
  machinery: { catalogId: 'MACHINERY', classificationId: 'ECLASS-DEMO', groupIds: ['MC-050200'] },
  // 100 products in 10 distinct groups: a page of references with repeats.
  lifestyle: {
    catalogId: 'LIFESTYLE',
    classificationId: 'LIFESTYLE-DEMO',
    groupIds: Array.from({ length: 100 }, (_, i) => lifestyleGroups[i % 10]!),
  },
  stale: {
    catalogId: 'LIFESTYLE',
    classificationId: 'LIFESTYLE-DEMO',
    groupIds: ['LS-010000', 'LS-GONE', 'LS-020000'],
  },
  // One reference more than FEDERATION_MAX_REPRESENTATIONS allows.
  huge: {
    catalogId: 'LIFESTYLE',
    classificationId: 'LIFESTYLE-DEMO',
    groupIds: Array.from({ length: 101 }, (_, i) => `LS-9${String(i).padStart(5, '0')}`),
  },
};

async function startStorefrontSubgraph() {
  const channel = (_: unknown, { id }: { id: string }) => {
    const found = channels[id];
    return (
      found && {
        id,
        catalog: { catalogId: found.catalogId },
        classification: { classificationId: found.classificationId },
        products: found.groupIds.map((classificationGroupId, i) => ({
          sku: `${id}-${i}`,
          group: { classificationId: found.classificationId, classificationGroupId },
        })),
      }
    );
  };
  const yoga = createYoga({
    schema: buildSubgraphSchema({ typeDefs: storefrontTypeDefs, resolvers: { Query: { channel } } }),
  });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('federation', () => {
  let upstream: DemoUpstream;
  let pim: Facade;
  let storefront: Awaited<ReturnType<typeof startStorefrontSubgraph>>;
  const gateways: Record<'apollo' | 'guild', ReturnType<typeof createGatewayRuntime>> = {} as never;

  beforeAll(async () => {
    upstream = await startDemoUpstream();
    // No HTTP cache: every call the façade sends reaches the recording upstream, so counts are DataLoader's.
    pim = await startFacade(upstream.url, { PIM_CACHE: 'false' });
    storefront = await startStorefrontSubgraph();
    const subgraphs = [
      { name: 'pim', typeDefs: parse(await readSubgraphSdl(schema)), url: pim.url },
      { name: 'storefront', typeDefs: storefrontTypeDefs, url: storefront.url },
    ];
    const composed = { apollo: composeWithApollo(subgraphs), guild: composeWithGuild(subgraphs) };
    for (const [name, result] of Object.entries(composed)) {
      expect(result.errors ?? [], name).toEqual([]);
      gateways[name as keyof typeof gateways] = createGatewayRuntime({
        supergraph: result.supergraphSdl!,
        logging: false,
        // What the README asks of a gateway: pass the caller's PIM credentials to this subgraph.
        propagateHeaders: {
          fromClientToSubgraphs: ({ request, subgraphName }) =>
            subgraphName === 'pim' ? { 'x-api-key': request.headers.get('x-api-key') ?? '' } : {},
        },
      });
    }
  });
  beforeEach(() => upstream.reset());
  afterAll(async () => {
    await Promise.all(Object.values(gateways).map((gateway) => gateway.dispose()));
    await Promise.all([pim?.close(), storefront?.close(), upstream?.close()]);
  });

  async function viaGateway(query: string, variables: Record<string, unknown> = {}, gateway = gateways.apollo) {
    const response = await gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'key-via-gateway' },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as { data?: any; errors?: any[] };
  }

  it('answers _service { sdl } with a @link-ed federation v2 SDL declaring the three entities', async () => {
    const response = await fetch(pim.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ _service { sdl } }' }),
    });
    const { data } = await response.json();
    expect(data._service.sdl).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+"/);
    expect(data._service.sdl).toMatch(/catalogProducts\(/);
    expect(data._service.sdl).toContain('type Catalog\n  @key(fields: "catalogId")');
    expect(data._service.sdl).toContain('type Classification\n  @key(fields: "classificationId")');
    expect(data._service.sdl).toContain(
      'type ClassificationGroup\n  @key(fields: "classificationId classificationGroupId")',
    );
  });

  it.each(['apollo', 'guild'] as const)(
    'follows references into the PIM (%s composition): the JSON of the root fields, credentials forwarded',
    async (composition) => {
      const body = await viaGateway(
        `query Channel($id: ID!) {
          channel(id: $id) {
            catalog { products(classificationGroupId: "MC-050200", sorting: "-productId", pageSize: 2) }
            classification { groups(languageId: "en", pageSize: 3) group(classificationGroupId: "MC-050200", levels: 1) }
            products { group { classificationGroupId group(languageId: "de") products(catalogId: "MACHINERY", pageSize: 2) } }
          }
          products: catalogProducts(catalogId: "MACHINERY", classificationGroupId: "MC-050200", sorting: "-productId", pageSize: 2)
          groups: classificationGroups(classificationId: "ECLASS-DEMO", languageId: "en", pageSize: 3)
          group: classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "MC-050200", levels: 1)
          german: classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "MC-050200", languageId: "de")
          groupProducts: catalogProducts(catalogId: "MACHINERY", classificationGroupClassificationId: "ECLASS-DEMO", classificationGroupId: "MC-050200", pageSize: 2)
        }`,
        { id: 'machinery' },
        gateways[composition],
      );
      expect(body.errors).toBeUndefined();
      const { channel, products, groups, group, german, groupProducts } = body.data;
      expect(products.data.map((p: { productId: string }) => p.productId)).toEqual(['X456-YZ-2015', 'S567-UV-2015']);
      expect(channel.catalog.products).toEqual(products);
      expect(channel.classification.groups).toEqual(groups);
      expect(channel.classification.group).toEqual(group);
      expect(channel.products[0].group).toEqual({
        classificationGroupId: 'MC-050200',
        group: german,
        products: groupProducts,
      });
      expect(upstream.requests.length).toBeGreaterThan(0);
      for (const request of upstream.requests) expect(request.headers['x-api-key']).toBe('key-via-gateway');
    },
  );

  it('answers the query docs/integration.md shows', async () => {
    const body = await viaGateway(documentedQuery);
    expect(body.errors).toBeUndefined();
    const { catalog, products } = body.data.channel;
    expect(catalog.products.data.map((p: { productId: string }) => p.productId)).toHaveLength(2);
    expect(products[0].group.group.data[0]).toMatchObject({ classificationGroupId: 'MC-050200' });
    expect(products[0].group.products.meta.paging).toMatchObject({ per_page: 5 });
  });

  it('costs one upstream call per distinct reference: 100 products in 10 groups make 10 calls', async () => {
    const body = await viaGateway(
      '{ channel(id: "lifestyle") { products { sku group { group(languageId: "en") } } } }',
    );
    expect(body.errors).toBeUndefined();
    const groups = body.data.channel.products.map((p: any) => p.group.group.data[0].classificationGroupId);
    expect(groups).toEqual(channels.lifestyle!.groupIds);
    // Hive Gateway sends each distinct key once; a gateway that sends all 100 costs the same 10
    // (federation-entities.test.ts), as the façade's per-request DataLoader shares repeated calls.
    expect(upstream.requests).toHaveLength(10);
  });

  it('gives a missing group null with NOT_FOUND at its path, while its neighbours resolve', async () => {
    const body = await viaGateway('{ channel(id: "stale") { products { sku group { group } } } }');
    const { products } = body.data.channel;
    expect(products.map((p: any) => p.group.group?.data[0].classificationGroupId ?? null)).toEqual([
      'LS-010000',
      null,
      'LS-020000',
    ]);
    // The subgraph answers at `_entities.1.group` (federation-entities.test.ts); Hive Gateway moves an error of
    // a batched entity fetch to another item's path (graphql-hive/gateway#1556), so the index is not checked here.
    expect(body.errors).toMatchObject([
      {
        message: 'No Classification found: classificationGroupId "LS-GONE", classificationId "LIFESTYLE-DEMO"',
        path: ['channel', 'products', expect.any(Number), 'group', 'group'],
        extensions: { code: 'NOT_FOUND', upstream: { status: 404 } },
      },
    ]);
  });

  it('refuses a page of references over FEDERATION_MAX_REPRESENTATIONS before any upstream call', async () => {
    const body = await viaGateway('{ channel(id: "huge") { products { sku group { group } } } }');
    expect(body.errors?.[0]).toMatchObject({
      message: '101 more entity representations would pass the limit of 100 per request; split the batch',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(upstream.requests).toEqual([]);
  });

  it('passes our error codes of root fields through the gateway to its client', async () => {
    const body = await viaGateway(
      '{ channel(id: "machinery") { catalog { catalogId } } catalogProducts(catalogId: "NOPE") }',
    );
    expect(body.data).toEqual({ channel: { catalog: { catalogId: 'MACHINERY' } }, catalogProducts: null });
    expect(body.errors).toMatchObject([
      { path: ['catalogProducts'], extensions: { code: 'NOT_FOUND', upstream: { status: 404 } } },
    ]);
  });
});
