import { describe, expect, it } from 'vitest';
import { freePort } from './helpers/free-port.ts';
import type { UpstreamHandler } from './helpers/upstream.ts';
import { startFacade, useFacade } from './helpers/facade.ts';

const fixture = useFacade({ PIM_TIMEOUT_MS: '300', PIM_API_KEY: 'secret-key' });

const reply =
  (status: number, body: string, type = 'application/json'): UpstreamHandler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': type, location: 'http://internal.example/' });
    res.end(body);
  };
const internals = 'java.lang.NullPointerException at com.pim.internal.Secret(Secret.java:42)';

// Each row: what the upstream does, the code, the upstream status, and the message.
const table: Array<[string, UpstreamHandler, string, number | undefined, string | RegExp]> = [
  [
    '404 with the service text',
    reply(404, '{"status":404,"meta":{"languageId":"en"},"error":"No Products found"}'),
    'NOT_FOUND',
    404,
    'No Products found',
  ],
  ['404 without a JSON body (a proxy: no verdict of the PIM)', reply(404, ''), 'UPSTREAM_ERROR', 404, /failed/],
  ['404 HTML from a proxy', reply(404, `<html>${internals}</html>`, 'text/html'), 'UPSTREAM_ERROR', 404, /failed/],
  ['404 with a body that says nothing', reply(404, '{"status":404}'), 'NOT_FOUND', 404, /Not found/],
  [
    '400 HTML from a proxy',
    reply(400, `<html>${internals}</html>`, 'text/html'),
    'UPSTREAM_BAD_REQUEST',
    400,
    /rejected/,
  ],
  ['422', reply(422, '{}'), 'UPSTREAM_BAD_REQUEST', 422, /rejected/],
  // The caller sent no key, so the key refused is the server's own (PIM_API_KEY).
  ['401 to the server key', reply(401, ''), 'SERVER_CREDENTIALS_REJECTED', 401, /own credentials/],
  ['403', reply(403, '{"error":"forbidden"}'), 'FORBIDDEN', 403, /credentials/],
  ['429', reply(429, ''), 'UPSTREAM_RATE_LIMITED', 429, /rate limiting/],
  ['500 with a stack trace', reply(500, internals, 'text/plain'), 'UPSTREAM_ERROR', 500, /failed/],
  ['503 HTML from a proxy', reply(503, '<html>nginx</html>', 'text/html'), 'UPSTREAM_ERROR', 503, /failed/],
  ['302 redirect', reply(302, ''), 'UPSTREAM_ERROR', 302, /failed/],
  ['200 with HTML', reply(200, '<html>login</html>', 'text/html'), 'UPSTREAM_ERROR', 200, /failed/],
  ['200 with malformed JSON', reply(200, '{"status":200,'), 'UPSTREAM_ERROR', 200, /failed/],
  ['no answer within the deadline', () => undefined, 'UPSTREAM_TIMEOUT', undefined, /in time/],
  ['connection reset', (req) => req.socket.destroy(), 'UPSTREAM_UNAVAILABLE', undefined, /unreachable/],
];

describe('error contract', () => {
  it.each(table)('%s', async (_name, handler, code, status, message) => {
    fixture.upstream.respond(handler);
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ catalogProducts(catalogId: "c1") __typename }' }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    const body = JSON.parse(text);
    expect(body.data).toEqual({ catalogProducts: null, __typename: 'Query' });
    expect(body.errors).toHaveLength(1);
    const [error] = body.errors;
    expect(error.path).toEqual(['catalogProducts']);
    expect(error.message).toMatch(message);
    expect(error.extensions).toEqual({ code, ...(status === undefined ? {} : { upstream: { status } }) });
    // Nothing internal leaks: no upstream address, key, stack or body.
    for (const secret of [
      String(fixture.upstream.port),
      'secret-key',
      'NullPointer',
      'nginx',
      'internal.example',
      'stack',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('a refused connection is UPSTREAM_UNAVAILABLE', async () => {
    const closed = await freePort();
    const offline = await startFacade(`http://127.0.0.1:${closed}`);
    const { body } = await offline.post('{ classificationGroups(classificationId: "E") }');
    await offline.close();
    expect(body.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
  });

  it('one failed field leaves its siblings their data', async () => {
    fixture.upstream.respond((req, res) =>
      req.url?.includes('/catalogs/')
        ? reply(404, '{"error":"No Products found"}')(req, res)
        : reply(200, '{"data":[]}')(req, res),
    );
    const { status, body } = await fixture.facade.post(
      '{ catalogProducts(catalogId: "nope") classificationGroups(classificationId: "E") }',
    );
    expect(status).toBe(200);
    expect(body.data).toEqual({ catalogProducts: null, classificationGroups: { data: [] } });
    expect(body.errors?.map((e: any) => e.extensions?.code)).toEqual(['NOT_FOUND']);
  });
});
