import { createHash } from 'node:crypto';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import type { Redis } from 'ioredis';
import type { Facade } from '../helpers/facade.ts';

/** Hex SHA-256, the hash APQ links send. */
export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The `extensions` of an APQ request naming `query` by its hash. */
const byHashExtensions = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(query) } });

/** A POST registering `query` under its hash, as a client does after a miss. */
export const register = (facade: Facade, query: string) =>
  facade.postBody({ query, extensions: byHashExtensions(query) });

/** A GET naming `query` by its hash only. */
export const byHash = (facade: Facade, query: string) =>
  facade.get(`/graphql?extensions=${encodeURIComponent(JSON.stringify(byHashExtensions(query)))}`);

/** The keys of the APQ documents a Redis holds (not the byte count kept beside them). */
export const storedDocuments = async (client: Redis) =>
  (await client.keys('pim-graphql:apq:*')).filter((key) => /:[0-9a-f]{64}$/.test(key));

/** One HTTP request as a client sent it: method, whether it carried the document, the hash or id it named. */
export interface SentRequest {
  method: string;
  url: string;
  hasQuery: boolean;
  hash: string | undefined;
  documentId: string | undefined;
}

/** A fetch that records what the client sends, so a test can tell a hash-only request from a full one. */
export function recordingFetch() {
  const sent: SentRequest[] = [];
  const record: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const params: Record<string, any> =
      request.method === 'GET'
        ? {
            query: url.searchParams.get('query') ?? undefined,
            extensions: JSON.parse(url.searchParams.get('extensions') ?? '{}'),
            documentId: url.searchParams.get('documentId') ?? undefined,
          }
        : JSON.parse(await request.clone().text());
    sent.push({
      method: request.method,
      url: request.url,
      hasQuery: typeof params.query === 'string',
      hash: params.extensions?.persistedQuery?.sha256Hash,
      documentId: params.documentId,
    });
    return fetch(request);
  };
  return { sent, fetch: record };
}

/** Query options for a test: always over the network, errors returned beside the data. */
export const noCache = { fetchPolicy: 'no-cache', errorPolicy: 'all' } as const;

/** Apollo Client with its persisted-query link, hashed queries over GET. */
export function apolloClient(
  uri: string,
  fetchFn: typeof fetch,
  options: Partial<PersistedQueryLink.Options> = { sha256 },
) {
  const persisted = new PersistedQueryLink({ useGETForHashedQueries: true, ...options } as PersistedQueryLink.Options);
  return new ApolloClient({
    link: ApolloLink.from([persisted, new HttpLink({ uri, fetch: fetchFn })]),
    cache: new InMemoryCache(),
  });
}

/** urql with the persisted exchange, persisted queries over GET. */
export function urqlClient(url: string, fetchFn: typeof fetch, options: Parameters<typeof persistedExchange>[0] = {}) {
  return new Client({
    url,
    fetch: fetchFn,
    requestPolicy: 'network-only',
    exchanges: [persistedExchange({ preferGetForPersistedQueries: true, ...options }), fetchExchange],
  });
}
