import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createContextFactory, type PimContext } from './context.ts';
import { maskError } from './errors.ts';
import { createPimClient } from './pim/client.ts';
import { schema } from './schema/index.ts';

export interface App {
  yoga: YogaServerInstance<object, PimContext>;
  /** Releases the upstream connection pool. */
  close(): Promise<void>;
}

/** Builds the GraphQL server for a configuration whose `pimBaseUrl` is set; does not listen. */
export function createApp(config: Config & { pimBaseUrl: string }, logger?: Logger): App {
  const client = createPimClient({
    baseUrl: config.pimBaseUrl,
    connectTimeoutMs: config.connectTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    maxConcurrency: config.maxConcurrency,
    credentialHeaders: config.pimApiKey ? [...config.forwardHeaders, 'x-api-key'] : config.forwardHeaders,
    coalesce: config.coalesce,
    cache: config.cache,
  });
  const yoga = createYoga<object, PimContext>({
    schema,
    context: createContextFactory({
      client,
      limits: { maxPageSize: config.maxPageSize, maxIdLength: config.maxIdLength },
      forwardHeaders: config.forwardHeaders,
      apiKey: config.pimApiKey,
    }),
    maskedErrors: { maskError },
    batching: config.batching ? { limit: 10 } : false,
    graphiql: !config.production,
    landingPage: false,
    logging: logger ?? false,
  });
  return { yoga, close: () => client.close() };
}
