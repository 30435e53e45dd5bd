import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices } from '@apollo/composition';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSubgraphSdl } from '../../src/schema/federation.ts';
import { schema } from '../../src/schema/index.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// A second subgraph owned by another team: catalog names, on its own port.
const catalogsTypeDefs = parse(/* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])
  type Query {
    catalog(id: ID!): Catalog
  }
  type Catalog @key(fields: "id") {
    id: ID!
    name: String!
  }
`);

async function startCatalogsSubgraph() {
  const yoga = createYoga({
    schema: buildSubgraphSchema({
      typeDefs: catalogsTypeDefs,
      resolvers: { Query: { catalog: (_: unknown, { id }: { id: string }) => ({ id, name: `Catalog ${id}` }) } },
    }),
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
  let upstream: Upstream;
  let pim: Facade;
  let catalogs: Awaited<ReturnType<typeof startCatalogsSubgraph>>;
  let gateway: ReturnType<typeof createGatewayRuntime>;

  beforeAll(async () => {
    upstream = await startUpstream();
    pim = await startFacade(upstream.url);
    catalogs = await startCatalogsSubgraph();
    const composed = composeServices([
      { name: 'pim', typeDefs: parse(await readSubgraphSdl(schema)), url: pim.url },
      { name: 'catalogs', typeDefs: catalogsTypeDefs, url: catalogs.url },
    ]);
    expect(composed.errors ?? []).toEqual([]);
    gateway = createGatewayRuntime({
      supergraph: composed.supergraphSdl!,
      logging: false,
      // What the README asks of a gateway: pass the caller's PIM credentials to this subgraph.
      propagateHeaders: {
        fromClientToSubgraphs: ({ request, subgraphName }) =>
          subgraphName === 'pim' ? { 'x-api-key': request.headers.get('x-api-key') ?? '' } : {},
      },
    });
  });
  afterAll(async () => {
    await gateway?.dispose();
    await Promise.all([pim?.close(), catalogs?.close(), upstream?.close()]);
  });

  async function viaGateway(query: string, variables: Record<string, unknown>) {
    const response = await gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'key-via-gateway' },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as { data?: any; errors?: any[] };
  }

  it('answers _service { sdl } with a @link-ed federation v2 SDL', async () => {
    const response = await fetch(pim.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ _service { sdl } }' }),
    });
    const { data } = await response.json();
    expect(data._service.sdl).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+"/);
    expect(data._service.sdl).toMatch(/catalogProducts\(/);
  });

  it('serves one operation across both subgraphs, with variables and forwarded credentials', async () => {
    const body = await viaGateway(
      `query Overview($catalogId: ID!, $groupId: ID) {
        catalog(id: $catalogId) { id name }
        catalogProducts(catalogId: $catalogId, classificationGroupId: $groupId, pageSize: 2)
      }`,
      { catalogId: 'MACHINERY', groupId: 'MC-050200' },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data.catalog).toEqual({ id: 'MACHINERY', name: 'Catalog MACHINERY' });
    expect(body.data.catalogProducts.data[0].url).toBe(
      '/pxm/pimapi/v1/catalogs/MACHINERY/products/search?classificationGroupId=MC-050200&pageSize=2',
    );
    expect(upstream.requests.at(-1)!.headers['x-api-key']).toBe('key-via-gateway');
  });

  it('passes our error codes through the gateway to its client', async () => {
    upstream.respond((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 404, error: 'Catalog NOPE not found' }));
    });
    try {
      const body = await viaGateway('query($id: ID!) { catalog(id: $id) { name } catalogProducts(catalogId: $id) }', {
        id: 'NOPE',
      });
      expect(body.data.catalog).toEqual({ name: 'Catalog NOPE' });
      expect(body.data.catalogProducts).toBeNull();
      expect(body.errors).toMatchObject([
        { path: ['catalogProducts'], extensions: { code: 'NOT_FOUND', upstream: { status: 404 } } },
      ]);
    } finally {
      upstream.reset();
    }
  });
});
