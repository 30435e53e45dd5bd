import { describe, expect, it } from 'vitest';
import { closedAfterEach, useFacade } from '../helpers/facade.ts';

// GraphQL over HTTP conformance of Accept negotiation, and the methods the GraphiQL assets answer.
// GraphQL over HTTP (spec/GraphQLOverHTTP.md, "Body"): "If an Accept header is provided, the server MUST respect the
// given Accept header and attempt to encode the response in the highest priority media type listed that is supported
// by the server." RFC 9110 §12.4.2: a qvalue of 0 means "not acceptable"; §12.5.1: the weight, not the order, ranks.
const fixture = useFacade();

const post = (accept: string, query = '{') =>
  fetch(fixture.facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({ query }),
  });

describe('Accept q-values choose the response media type', () => {
  it('a type the client rules out with q=0 is not the one sent (a parse error: application/json, 200)', async () => {
    const response = await post('application/graphql-response+json;q=0, application/json');
    const body = await response.json();
    expect(body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.status).toBe(200);
  });

  it('the type of higher weight wins whatever the order (a parse error: graphql-response+json, 400)', async () => {
    const response = await post('application/json;q=0.5, application/graphql-response+json');
    const body = await response.json();
    expect(body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(response.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(response.status).toBe(400);
  });

  it('an operation that streams is refused (406) when the client rules every stream type out with q=0', async () => {
    fixture.upstream.reset();
    const response = await post(
      'multipart/mixed;q=0, text/event-stream;q=0, application/json',
      '{ a: catalogProducts(catalogId: "A") ... @defer { b: catalogProducts(catalogId: "B") } }',
    );
    await response.text();
    expect(response.headers.get('content-type')).not.toMatch(/^multipart\/mixed/);
    expect(response.status).toBe(406);
  });

  it('GraphiQL is not served to a GET that rules text/html out with q=0', async () => {
    const query = encodeURIComponent('{ __typename }');
    const response = await fetch(`${fixture.facade.url}?query=${query}`, {
      headers: { accept: 'text/html;q=0, application/json' },
    });
    const text = await response.text();
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(text)).toEqual({ data: { __typename: 'Query' } });
  });

  it('GraphiQL is not served to a GET that weighs text/html below JSON', async () => {
    const query = encodeURIComponent('{ __typename }');
    const response = await fetch(`${fixture.facade.url}?query=${query}`, {
      headers: { accept: 'application/json, text/html;q=0.1' },
    });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.text()).toBe('{"data":{"__typename":"Query"}}');
  });

  it('a 406 names the Accept as the client sent it, not as ranked', async () => {
    const response = await post('text/plain;q=0.5, text/csv', '{ __typename }');
    const body = await response.json();
    expect(response.status).toBe(406);
    expect(body.errors[0].message).toContain('text/plain;q=0.5, text/csv');
  });
});

// RFC 9110 §5.6.6: "A parameter value that matches the token production can be transmitted either as a token or within
// a quoted-string. The quoted and unquoted values are equivalent." §8.3.2: charset names are case-insensitive.
describe('a quoted charset parameter in Accept', () => {
  it.each(['application/json; charset="utf-8"', 'application/graphql-response+json; charset="UTF-8"'])(
    'Accept: %s is served, not refused with 406',
    async (accept) => {
      const response = await post(accept, '{ __typename }');
      const text = await response.text();
      expect([response.status, text]).toEqual([200, '{"data":{"__typename":"Query"}}']);
    },
  );
});

// docs/operations.md, HTTP table: "a method other than GET, HEAD (served as GET without the body) and POST ... 405"
// with `Allow` and the code METHOD_NOT_ALLOWED. A static file has nothing to PUT or DELETE: a 200 with the 800 KB
// stylesheet (or the 5-7 MB bundle) to a DELETE says it was done.
describe('the GraphiQL assets (served where introspection is on, the default outside production)', () => {
  it.each(['PUT', 'DELETE'])('%s of an asset is refused with 405 METHOD_NOT_ALLOWED', async (method) => {
    const answer = await fixture.facade.request('/graphiql-assets/graphiql.css', { method });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toMatch(/GET/);
    expect(answer.body?.errors?.[0]?.extensions?.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('a plain OPTIONS of an asset is refused with 405, not answered with the file', async () => {
    const answer = await fixture.facade.request('/graphiql-assets/graphiql.css', { method: 'OPTIONS' });
    expect([answer.status, answer.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });
});

describe("the GraphiQL assets' CORS preflight", () => {
  const { start } = closedAfterEach();
  const origin = 'https://app.example';
  const preflight = (from: string) => ({
    method: 'OPTIONS',
    headers: { origin: from, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' },
  });

  it('from a listed origin is answered by CORS', async () => {
    const { facade } = await start(() => undefined, { CORS_ORIGINS: origin });
    const answer = await facade.request('/graphiql-assets/graphiql.css', preflight(origin));
    expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
    expect(answer.status).toBeLessThan(300);
  });

  it('from an unlisted origin is refused, not answered with the file', async () => {
    const { facade } = await start(() => undefined, { CORS_ORIGINS: origin });
    const answer = await facade.request('/graphiql-assets/graphiql.css', preflight('https://elsewhere.example'));
    expect([answer.status, answer.headers.get('access-control-allow-origin')]).toEqual([405, null]);
  });
});
