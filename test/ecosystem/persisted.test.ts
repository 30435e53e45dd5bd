import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CombinedGraphQLErrors, gql, type TypedDocumentNode } from '@apollo/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CatalogProductsDocument, ClassificationGroupsDocument } from '../../examples/gql/graphql.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';
import { apolloClient, noCache, recordingFetch, sha256, urqlClient } from './persisted-client.ts';

const committedManifest = fileURLToPath(new URL('../../examples/gql/persisted-documents.json', import.meta.url));
// 20 aliases: over GRAPHQL_MAX_ALIASES (15), so the abuse limits must refuse it even from the manifest.
const hostile = `query Hostile { ${Array.from({ length: 20 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
const products = { catalogId: 'MACHINERY', groupId: 'MC-050200', pageSize: 1 };
const searches = () => upstream.requests.filter((r) => r.url.includes('/products/search')).length;

let upstream: DemoUpstream;
let apq: Facade;
let trusted: Facade;
let dir: string;
beforeAll(async () => {
  upstream = await startDemoUpstream();
  dir = mkdtempSync(join(tmpdir(), 'persisted-'));
  const manifest = { ...JSON.parse(readFileSync(committedManifest, 'utf8')), [`sha256:${sha256(hostile)}`]: hostile };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  const env = { PIM_CACHE: 'false', PERSISTED_DOCUMENTS_PATH: join(dir, 'manifest.json') };
  apq = await startFacade(upstream.url, env);
  trusted = await startFacade(upstream.url, {
    ...env,
    PERSISTED_DOCUMENTS_PATH: committedManifest,
    PERSISTED_DOCUMENTS_ONLY: 'true',
  });
});
afterAll(async () => {
  await apq?.close();
  await trusted?.close();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => upstream.reset());

/** A GET naming a document by APQ hash only. */
const byHash = (facade: Facade, hash: string, headers: Record<string, string> = {}) =>
  fetch(
    `${facade.url}?extensions=${encodeURIComponent(JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash } }))}`,
    { headers },
  );
/** A POST registering a document under a hash, as a client does after a miss. */
const register = (facade: Facade, query: string, hash = sha256(query)) =>
  fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }),
  });
const codes = async (response: Response) => ((await response.json()).errors ?? []).map((e: any) => e.extensions?.code);

describe('APQ with Apollo Client (persisted-query link, hashed queries over GET)', () => {
  const ApolloProducts: TypedDocumentNode<{ catalogProducts: unknown }> = gql`
    query ApolloProducts {
      catalogProducts(catalogId: "MACHINERY", pageSize: 1)
    }
  `;

  it('sends the hash, the document once on a miss, then only the hash', async () => {
    const first = recordingFetch();
    const miss = await apolloClient(apq.url, first.fetch).query({ query: ApolloProducts, ...noCache });
    expect(miss.error).toBeUndefined();
    expect(miss.data?.catalogProducts).toMatchObject({ status: 200 });
    expect(first.sent.map(({ method, hasQuery }) => [method, hasQuery])).toEqual([
      ['GET', false],
      ['POST', true],
    ]);
    expect(searches()).toBe(1);

    // A new client (a page reload): its first request is already a hit.
    const second = recordingFetch();
    const hit = await apolloClient(apq.url, second.fetch).query({ query: ApolloProducts, ...noCache });
    expect(hit.data).toEqual(miss.data);
    expect(second.sent).toMatchObject([{ method: 'GET', hasQuery: false, hash: first.sent[0]!.hash }]);
    expect(new URL(second.sent[0]!.url).searchParams.has('query')).toBe(false);
    expect(searches()).toBe(2);
  });

  it('refuses a document whose hash does not match it, and stores nothing under that hash', async () => {
    const lie = sha256('query Other { __typename }');
    const sent = recordingFetch();
    const { error } = await apolloClient(apq.url, sent.fetch, { generateHash: () => lie }).query({
      query: ApolloProducts,
      ...noCache,
    });
    expect(CombinedGraphQLErrors.is(error) && error.errors.map((e) => e.extensions?.code)).toEqual([
      'PERSISTED_QUERY_MISMATCH',
    ]);
    expect(sent.sent.map(({ method, hasQuery }) => [method, hasQuery])).toEqual([
      ['GET', false],
      ['POST', true],
    ]);
    const after = await byHash(apq, lie);
    expect(after.status).toBe(404);
    expect(await codes(after)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(searches()).toBe(0);
  });
});

describe('APQ with urql (persisted exchange over GET)', () => {
  const UrqlGroups = 'query UrqlGroups { classificationGroups(classificationId: "ECLASS-DEMO", pageSize: 1) }';

  it('sends the hash, the document once on a miss (still a GET), then only the hash', async () => {
    const first = recordingFetch();
    const miss = await urqlClient(apq.url, first.fetch).query(UrqlGroups, {});
    expect(miss.error).toBeUndefined();
    expect(miss.data?.classificationGroups).toMatchObject({ status: 200 });
    expect(first.sent.map(({ method, hasQuery }) => [method, hasQuery])).toEqual([
      ['GET', false],
      ['GET', true],
    ]);
    // urql hashes the document as it prints it, and sends that same text on the miss.
    expect(first.sent[0]!.hash).toBe(sha256(new URL(first.sent[1]!.url).searchParams.get('query')!));

    const second = recordingFetch();
    const hit = await urqlClient(apq.url, second.fetch).query(UrqlGroups, {});
    expect(hit.data).toEqual(miss.data);
    expect(second.sent).toMatchObject([{ method: 'GET', hasQuery: false }]);
    expect(second.sent[0]!.url.length).toBeLessThan(first.sent[1]!.url.length);
    expect(upstream.requests.map((r) => r.method)).toEqual(['GET', 'GET']);
  });
});

describe('the APQ protocol', () => {
  it('answers an unknown hash with 404 PERSISTED_QUERY_NOT_FOUND that no cache may store', async () => {
    const response = await byHash(apq, '0'.repeat(64));
    expect(response.status).toBe(404);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await codes(response)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    // With a credential, `private` too, as every refusal then (docs/integration.md, Caching headers).
    const keyed = await byHash(apq, '0'.repeat(64), { 'x-api-key': 'k' });
    expect([keyed.status, keyed.headers.get('cache-control')]).toEqual([404, 'private, no-store']);
    expect(upstream.requests).toHaveLength(0);
  });

  it('applies the abuse limits to persisted documents, from the manifest as from the store', async () => {
    const fromManifest = await fetch(`${apq.url}?documentId=sha256:${sha256(hostile)}`);
    expect(fromManifest.status).toBe(400);
    expect(await codes(fromManifest)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  // A client or CDN that asked for document X must get X's answer or a refusal, never another text's.
  it('refuses a request that names a document and sends a text too, GET or POST, with 400 and nothing upstream', async () => {
    const id = (CatalogProductsDocument as any).__meta__.hash;
    const other = '{ catalogProducts(catalogId: "OTHER") }';
    const variables = encodeURIComponent(JSON.stringify(products));
    const viaGet = await fetch(`${apq.url}?documentId=${id}&query=${encodeURIComponent(other)}&variables=${variables}`);
    const viaPost = await fetch(apq.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ documentId: id, query: other }),
    });
    for (const response of [viaGet, viaPost]) {
      expect(response.status).toBe(400);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const { errors } = await response.json();
      expect(errors).toMatchObject([
        { message: 'Send a document id or a query text, not both', extensions: { code: 'BAD_REQUEST' } },
      ]);
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('runs a text sent with a documentId that is null or empty, as a generic client sends an unset field', async () => {
    const query = '{ __typename }';
    const viaGet = await fetch(`${apq.url}?query=${encodeURIComponent(query)}&documentId=`);
    const viaPost = await fetch(apq.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, documentId: null }),
    });
    for (const response of [viaGet, viaPost]) expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('stores a registered document only once it has parsed and passed the abuse limits', async () => {
    const refused = [hostile.replace('Hostile', 'Hostile2'), 'query Broken { __typename'];
    const sent = await Promise.all(refused.map(async (doc) => codes(await register(apq, doc))));
    expect(sent).toEqual([['GRAPHQL_VALIDATION_FAILED'], ['GRAPHQL_PARSE_FAILED']]);
    for (const doc of refused) {
      const later = await byHash(apq, sha256(doc));
      expect(later.status).toBe(404);
      expect(await codes(later)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    }
  });

  it('keeps a bounded store: past APQ_MAX_DOCUMENTS the least recently used goes, past APQ_MAX_BYTES nothing is kept', async () => {
    const bounded = await startFacade(upstream.url, { APQ_MAX_DOCUMENTS: '2', APQ_MAX_BYTES: '1024' });
    try {
      const docs = ['A', 'B', 'C'].map((name) => `query ${name} { __typename }`);
      for (const doc of docs) expect((await register(bounded, doc)).status).toBe(200);
      expect((await byHash(bounded, sha256(docs[0]!))).status).toBe(404);
      for (const doc of docs.slice(1)) expect((await byHash(bounded, sha256(doc))).status).toBe(200);
      // Over the byte bound (a comment makes it long without tokens): executed, never stored.
      const big = `# ${'x'.repeat(1_100)}\nquery Big { __typename }`;
      expect((await register(bounded, big)).status).toBe(200);
      expect((await byHash(bounded, sha256(big))).status).toBe(404);
      for (const doc of docs.slice(1)) expect((await byHash(bounded, sha256(doc))).status).toBe(200);
    } finally {
      await bounded.close();
    }
  });

  it('counts only the manifest operation names as metric labels', async () => {
    await apolloClient(apq.url, fetch, { generateHash: (doc: any) => doc.__meta__.hash }).query({
      query: CatalogProductsDocument,
      variables: products,
      ...noCache,
    });
    await apq.post('query NotInManifest { __typename }');
    const scrape = await (await fetch(`${apq.origin}/metrics`)).text();
    expect(scrape).toContain('graphql_operations_total{operation_type="query",operation_name="CatalogProducts"} 1');
    expect(scrape).not.toContain('NotInManifest');
    expect(scrape).not.toContain('ApolloProducts');
  });
});

describe('trusted documents only (PERSISTED_DOCUMENTS_ONLY=true)', () => {
  const fromManifest = { generateHash: (doc: any) => doc.__meta__.hash };

  it('runs the manifest documents by hash with Apollo Client and urql, and by documentId', async () => {
    const apollo = recordingFetch();
    const viaApollo = await apolloClient(trusted.url, apollo.fetch, fromManifest).query({
      query: CatalogProductsDocument,
      variables: products,
      ...noCache,
    });
    expect(viaApollo.error).toBeUndefined();
    expect(apollo.sent).toMatchObject([{ method: 'GET', hasQuery: false }]);
    const urql = recordingFetch();
    const viaUrql = await urqlClient(trusted.url, urql.fetch, {
      enforcePersistedQueries: true,
      generateHash: async (_query, doc: any) => doc.__meta__.hash,
    }).query(ClassificationGroupsDocument, { classificationId: 'ECLASS-DEMO', pageSize: 1 });
    expect(viaUrql.error).toBeUndefined();
    expect(urql.sent).toMatchObject([{ method: 'GET', hasQuery: false }]);
    const id = (CatalogProductsDocument as any).__meta__.hash;
    const byId = await fetch(
      `${trusted.url}?documentId=${id}&variables=${encodeURIComponent(JSON.stringify(products))}`,
    );
    expect((await byId.json()).data.catalogProducts).toMatchObject({ status: 200 });
    expect(upstream.requests).toHaveLength(3);
  });

  it('refuses any other document with 400 TRUSTED_DOCUMENT_REQUIRED, sent as text or by hash', async () => {
    const text = await trusted.post('{ catalogProducts(catalogId: "MACHINERY") }');
    expect([text.status, text.body.errors[0].extensions.code]).toEqual([400, 'TRUSTED_DOCUMENT_REQUIRED']);
    const unknown = await byHash(trusted, sha256('{ __typename }'));
    expect([unknown.status, await codes(unknown)]).toEqual([400, ['TRUSTED_DOCUMENT_REQUIRED']]);
    const sent = recordingFetch();
    const { error } = await apolloClient(trusted.url, sent.fetch).query({
      query: gql`
        query Untrusted {
          classificationGroups(classificationId: "ECLASS-DEMO")
        }
      `,
      ...noCache,
    });
    expect(CombinedGraphQLErrors.is(error) && error.errors[0]!.extensions?.code).toBe('TRUSTED_DOCUMENT_REQUIRED');
    // The refusal is final: the link does not fall back to sending the document.
    expect(sent.sent).toHaveLength(1);
    expect(upstream.requests).toHaveLength(0);
  });

  it('will not start without a manifest, or with an entry whose id is not its SHA-256', async () => {
    await expect(startFacade(upstream.url, { PERSISTED_DOCUMENTS_ONLY: 'true' })).rejects.toThrow(
      'PERSISTED_DOCUMENTS_ONLY=true needs PERSISTED_DOCUMENTS_PATH',
    );
    writeFileSync(join(dir, 'wrong-ids.json'), JSON.stringify({ [sha256('{ a }')]: '{ b }' }));
    await expect(startFacade(upstream.url, { PERSISTED_DOCUMENTS_PATH: join(dir, 'wrong-ids.json') })).rejects.toThrow(
      /is not a document whose SHA-256 is its id/,
    );
  });
});
