import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CatalogProductsDocument } from '../../examples/gql/graphql.ts';
import { sha256 } from './persisted-client.ts';
import { closedAfterEach, useFacade } from '../helpers/facade.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

// test/ecosystem/persisted.test.ts holds that an empty (or null) field is "a generic client's unset field"
// (src/plugins/persisted.ts: "`null` or empty ... names none"): a text sent beside `documentId: ""` runs. A client of
// that shape sends the empty field the other way round too: an APQ hash beside `documentId: ""`, or a hash or an id
// beside `query: ""` (Yoga's persisted-operations plugin itself takes an empty query for none and looks the id up).
const fixture = useFacade({ PIM_CACHE: 'false' }, cacheableEcho(60));
const servers = closedAfterEach();
const manifest = fileURLToPath(new URL('../../examples/gql/persisted-documents.json', import.meta.url));
const query = 'query Empty { p: catalogProducts(catalogId: "empty-fields") }';
const hash = sha256(query);
const extensions = { persistedQuery: { version: 1, sha256Hash: hash } };
const qs = (params: Record<string, unknown>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join('&');
const summary = (answer: { status: number; body: any }) => ({
  status: answer.status,
  code: answer.body?.errors?.[0]?.extensions?.code,
  data: answer.body?.data?.p?.status,
});

describe('empty fields beside a persisted document id, as a generic client sends unset ones', () => {
  it('finds a registered APQ document named by hash beside an empty documentId (GET and POST)', async () => {
    const { facade } = fixture;
    expect(summary(await facade.postBody({ query, extensions }))).toEqual({ status: 200, code: undefined, data: 200 });
    // The hash alone finds it (the control).
    expect(summary(await facade.get(`/graphql?${qs({ extensions })}`))).toMatchObject({ status: 200, data: 200 });
    const viaGet = await facade.get(`/graphql?${qs({ documentId: '', extensions })}`);
    const viaPost = await facade.postBody({ documentId: '', extensions });
    expect([summary(viaGet), summary(viaPost)]).toEqual([
      { status: 200, code: undefined, data: 200 },
      { status: 200, code: undefined, data: 200 },
    ]);
  });

  it('runs a trusted document named by its APQ hash beside an empty documentId (PERSISTED_DOCUMENTS_ONLY)', async () => {
    const { facade } = await servers.start(cacheableEcho(60), {
      PIM_CACHE: 'false',
      PERSISTED_DOCUMENTS_PATH: manifest,
      PERSISTED_DOCUMENTS_ONLY: 'true',
    });
    const id: string = (CatalogProductsDocument as any).__meta__.hash;
    const trusted = { persistedQuery: { version: 1, sha256Hash: id.replace(/^sha256:/, '') } };
    const variables = { catalogId: 'MACHINERY', groupId: 'MC-050200', pageSize: 1 };
    // The control: the hash alone runs it.
    const alone = await facade.postBody({ extensions: trusted, variables });
    expect([alone.status, alone.body.errors]).toEqual([200, undefined]);
    const withEmptyId = await facade.postBody({ documentId: '', extensions: trusted, variables });
    expect([withEmptyId.status, withEmptyId.body.errors?.[0]?.extensions?.code]).toEqual([200, undefined]);
  });

  it('looks up an APQ hash or a documentId sent beside an empty query instead of refusing it', async () => {
    const { facade } = fixture;
    await facade.postBody({ query, extensions });
    const byHash = await facade.postBody({ query: '', extensions });
    const byId = await facade.postBody({ query: '', documentId: `sha256:${hash}` });
    expect([summary(byHash), summary(byId)]).toEqual([
      { status: 200, code: undefined, data: 200 },
      { status: 200, code: undefined, data: 200 },
    ]);
  });
});
