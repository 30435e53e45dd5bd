import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

function answer(req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'max-age=60',
    date: new Date().toUTCString(),
  });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
}

const fixture = useFacade(
  { PIM_API_KEY: 'server-key', RESPONSE_CACHE_MAX_BYTES: '1048576', CORS_ORIGINS: 'https://shop.example' },
  answer,
);
const query = 'query P($id: ID!) { catalogProducts(catalogId: $id) }';
const url = (id: string) =>
  `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id }))}`;

// A GET answer is served as application/json or application/graphql-response+json, as Accept asks (Vary: Accept),
// with the same bytes. Its strong ETag must tell the two apart (RFC 9110 §8.8.1: representations that differ in
// metadata differ in validator), or a cache revalidating both (RFC 9111 §4.3.1) may pick the wrong stored one.
describe('the ETag of a GET answer', () => {
  it('differs between the two media types of the same body', async () => {
    const json = await fixture.facade.get(url('etag-1'), { accept: 'application/json' });
    const gql = await fixture.facade.get(url('etag-1'), { accept: 'application/graphql-response+json' });
    expect(json.headers.get('content-type')).not.toBe(gql.headers.get('content-type'));
    expect(json.headers.get('etag')).not.toMatch(/^W\//);
    expect(gql.headers.get('etag')).not.toBe(json.headers.get('etag'));
  });

  it('does not answer 304 to a validator of a representation of another media type', async () => {
    const json = await fixture.facade.get(url('etag-2'), { accept: 'application/json' });
    const gql = await fixture.facade.get(url('etag-2'), {
      accept: 'application/graphql-response+json',
      'if-none-match': json.headers.get('etag')!,
    });
    expect(gql.status).toBe(200);
  });
});
