/**
 * Request-URL and response sizes of the example operations sent as GETs three ways: the full
 * document (as Apollo Client prints it), an APQ hash, and a trusted `documentId`.
 * `npm run bench:persisted-sizes`: prints a Markdown table; starts and stops its own loopback servers.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { parse, print } from 'graphql';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDemoService } from '../src/demo/service.ts';
import { createServer as createFacadeServer } from '../src/http/server.ts';

const manifestPath = new URL('../examples/gql/persisted-documents.json', import.meta.url);
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, string>;
const ids = { catalogId: 'MACHINERY', classificationId: 'ECLASS-DEMO', groupId: 'MC-050200' };
const variables: Record<string, object> = {
  CatalogOverview: { ...ids, languageId: 'en' },
  ClassificationGroup: { ...ids, levels: 1 },
  ClassificationGroups: { classificationId: ids.classificationId, pageSize: 5 },
  DeferredProducts: ids,
  CatalogProducts: { catalogId: ids.catalogId, groupId: ids.groupId, pageSize: 5 },
  Entities: {
    representations: [
      { __typename: 'ClassificationGroup', classificationId: ids.classificationId, classificationGroupId: ids.groupId },
    ],
    catalogId: ids.catalogId,
    groupId: ids.groupId,
    languageId: 'en',
  },
};

const listen = async (server: ReturnType<typeof createServer>) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const upstream = createServer(createServerAdapter(createDemoService()));
const upstreamUrl = await listen(upstream);
const config = loadConfig({ PIM_BASE_URL: upstreamUrl, PERSISTED_DOCUMENTS_PATH: manifestPath.pathname });
const facade = createFacadeServer(createApp({ ...config, pimBaseUrl: upstreamUrl }), config.http);
const origin = await listen(facade);

/** Bytes of the request-target and of the response body of one GET. */
async function get(params: Record<string, string>) {
  const target = `/graphql?${new URLSearchParams(params)}`;
  const response = await fetch(origin + target, {
    headers: { accept: 'multipart/mixed, application/graphql-response+json' },
  });
  const body = await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${target} answered ${response.status}`);
  return { url: target.length, body: body.byteLength };
}

console.log('| operation | full document: URL bytes | APQ hash: URL bytes | documentId: URL bytes | response bytes |');
console.log('|---|---|---|---|---|');
for (const [id, document] of Object.entries(manifest)) {
  const name = /query (\w+)/.exec(document)![1]!;
  const vars = JSON.stringify(variables[name]);
  const printed = print(parse(document));
  const hash = createHash('sha256').update(printed).digest('hex');
  const persistedQuery = JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash } });
  // Registers the document under its hash, as the client's retry after a miss does.
  const full = await get({ operationName: name, query: printed, variables: vars, extensions: persistedQuery });
  const byHash = await get({ operationName: name, variables: vars, extensions: persistedQuery });
  const byId = await get({ documentId: id, variables: vars });
  console.log(`| ${name} | ${full.url} | ${byHash.url} | ${byId.url} | ${full.body} (by hash: ${byHash.body}) |`);
}
await facade.shutdown();
await new Promise((resolve) => upstream.close(resolve));
