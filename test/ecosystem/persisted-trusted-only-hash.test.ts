import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { sha256 } from './persisted-client.ts';
import { useFacade } from '../helpers/facade.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

// docs/integration.md: "Trusted documents only (PERSISTED_DOCUMENTS_ONLY=true) refuses every document that is not in
// the manifest, sent as text or by an unknown id, with HTTP 400 TRUSTED_DOCUMENT_REQUIRED, and turns APQ off."
// A text sent with an APQ hash is such a document, whatever the hash: APQ is off, so the hash is not checked against
// anything and the refusal carries the one documented code.
const manifest = fileURLToPath(new URL('../../examples/gql/persisted-documents.json', import.meta.url));
const fixture = useFacade(
  { PIM_CACHE: 'false', PERSISTED_DOCUMENTS_PATH: manifest, PERSISTED_DOCUMENTS_ONLY: 'true' },
  cacheableEcho(60),
);
const text = '{ catalogProducts(catalogId: "not-trusted") }';
const withHash = (hash: string) => ({ query: text, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });

it.each([
  ['its own hash', sha256(text)],
  ['a hash of another text', sha256('{ __typename }')],
  ['a hash that is no hash', 'not-a-hash'],
])('refuses a text sent with %s with 400 TRUSTED_DOCUMENT_REQUIRED', async (_name, hash) => {
  const answer = await fixture.facade.postBody(withHash(hash));
  expect([answer.status, answer.body.errors?.[0]?.extensions?.code]).toEqual([400, 'TRUSTED_DOCUMENT_REQUIRED']);
  expect(fixture.upstream.requests).toHaveLength(0);
});
