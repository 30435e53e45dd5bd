import DataLoader from 'dataloader';
import { createSchema, createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { JSONResolver } from 'graphql-scalars';
import { Pool } from 'undici';

interface FloorContext {
  load: DataLoader<string, unknown>;
}

/**
 * The floor the façade is measured against: graphql-yoga with its defaults, a per-request
 * DataLoader and an undici Pool calling the upstream, serving `catalogProducts` as the same
 * JSON field and nothing else (no limits, logs, metrics, cache or resilience). The bill of costs
 * adds one of the façade's `plugins` to price it.
 */
export function createFloor(
  upstreamUrl: string,
  connections: number,
  plugins: Plugin[] = [],
): YogaServerInstance<object, FloorContext> {
  const pool = new Pool(upstreamUrl, { connections });
  const get = async (path: string) => {
    const { body } = await pool.request({ method: 'GET', path, headers: { accept: 'application/json' } });
    return body.json();
  };
  const schema = createSchema<FloorContext>({
    typeDefs: /* GraphQL */ `
      scalar JSON
      type Query {
        catalogProducts(catalogId: ID!, languageId: String, page: Int, pageSize: Int): JSON
      }
    `,
    resolvers: {
      JSON: JSONResolver,
      Query: {
        catalogProducts: (_: unknown, { catalogId, ...query }: Record<string, string | number>, { load }) => {
          const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
          return load.load(`/pxm/pimapi/v1/catalogs/${encodeURIComponent(catalogId!)}/products/search?${search}`);
        },
      },
    },
  });
  return createYoga<object, FloorContext>({
    schema,
    context: () => ({ load: new DataLoader((paths) => Promise.all(paths.map(get))) }),
    plugins,
    logging: false,
    graphiql: false,
    landingPage: false,
  });
}
