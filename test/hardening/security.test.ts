import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faults, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

const accept = 'application/graphql-response+json, application/json;q=0.9';
const introspection = '{ __schema { queryType { name } } }';
const typo = '{ catalogProduct(catalogId: "a") }';

describe('FEDERATION_SDL=true in production', () => {
  it('serves _service { sdl } to a gateway while introspection stays off', async () => {
    const facade = await startFacade(upstream.url, { NODE_ENV: 'production', FEDERATION_SDL: 'true' });
    try {
      expect((await facade.post('{ _service { sdl } }')).body.data._service.sdl).toMatch(/catalogProducts/);
      expect((await facade.post(introspection, undefined, { accept })).status).toBe(400);
    } finally {
      await facade.close();
    }
  });
});

describe.each([
  ['NODE_ENV=production', { NODE_ENV: 'production' }],
  ['GRAPHQL_INTROSPECTION=false', { GRAPHQL_INTROSPECTION: 'false' }],
])('with %s', (_name, env) => {
  let facade: Facade;
  beforeAll(async () => {
    facade = await startFacade(upstream.url, env);
  });
  afterAll(() => facade.close());

  it('refuses introspection', async () => {
    const { status, body } = await facade.post(introspection, undefined, { accept });
    expect(status).toBe(400);
    expect(body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(body.data).toBeUndefined();
  });

  it("does not print the schema through federation's _service either", async () => {
    const { status, text } = await facade.post('{ _service { sdl } }', undefined, { accept });
    expect(status).toBe(400);
    expect(text).toMatch(/FEDERATION_SDL/);
    expect(text).not.toMatch(/catalogProducts/);
  });

  it('names no field in suggestions', async () => {
    const { text } = await facade.post(typo, undefined, { accept });
    expect(text).toMatch(/Cannot query field/);
    expect(text).not.toMatch(/Did you mean|catalogProducts/);
  });

  it('serves no GraphiQL', async () => {
    const response = await fetch(facade.url, { headers: { accept: 'text/html' } });
    expect(await response.text()).not.toMatch(/graphiql/i);
  });
});

describe('development defaults', () => {
  let facade: Facade;
  beforeAll(async () => {
    facade = await startFacade(upstream.url, { NODE_ENV: 'development' });
  });
  afterAll(() => facade.close());

  it('answers introspection, suggests fields and serves GraphiQL', async () => {
    expect((await facade.post(introspection)).body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    expect((await facade.post(typo)).body.errors[0].message).toMatch(/Did you mean "catalogProducts"/);
    const page = await fetch(facade.url, { headers: { accept: 'text/html' } });
    expect(await page.text()).toMatch(/graphiql/i);
  });

  it('sends no CORS headers to any origin when no allow-list is set', async () => {
    const response = await fetch(`${facade.url}?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { origin: 'https://evil.example' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS allow-list', () => {
  let facade: Facade;
  beforeAll(async () => {
    facade = await startFacade(upstream.url, { CORS_ORIGINS: 'https://shop.example, https://admin.example' });
  });
  afterAll(() => facade.close());

  const preflight = (origin: string) =>
    fetch(facade.url, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });

  it('names exactly a listed origin', async () => {
    const response = await preflight('https://admin.example');
    expect(response.headers.get('access-control-allow-origin')).toBe('https://admin.example');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('gives an unlisted origin nothing to go on', async () => {
    const response = await preflight('https://evil.example');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  // A browser app reads only the response headers CORS exposes: the request id to quote in a bug report, and
  // what says how old an answer is.
  it('lets a listed origin read the request id, ETag and Age', async () => {
    const response = await fetch(`${facade.url}?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { origin: 'https://shop.example' },
    });
    const exposed = response.headers
      .get('access-control-expose-headers')
      ?.toLowerCase()
      .split(/\s*,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'etag', 'age']));
  });
});

describe('CSRF prevention, one setting away', () => {
  let facade: Facade;
  beforeAll(async () => {
    facade = await startFacade(upstream.url, { GRAPHQL_CSRF_PREVENTION: 'true' });
  });
  afterAll(() => facade.close());
  const get = (headers: Record<string, string>) =>
    fetch(`${facade.url}?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept, ...headers } });

  it('refuses a GET without the header a browser cannot add cross-site without a preflight', async () => {
    const refused = await get({});
    expect(refused.status).toBe(403);
    // As every other refusal: a stable code beside the message.
    expect((await refused.json()).errors[0].extensions.code).toBe('CSRF_HEADER_REQUIRED');
    expect((await get({ 'x-graphql-yoga-csrf': '1' })).status).toBe(200);
  });

  // What Apollo's servers and router accept, and so what Apollo's clients and docs send.
  it.each(['apollo-require-preflight', 'x-apollo-operation-name'])('takes %s as that header too', async (name) => {
    expect((await get({ [name]: 'true' })).status).toBe(200);
  });

  it('lets JSON POSTs through, which always need a preflight', async () => {
    expect((await facade.post('{ __typename }')).status).toBe(200);
  });
});

describe('the node:http server', () => {
  let facade: Facade;
  beforeAll(async () => {
    facade = await startFacade(upstream.url, { HTTP_HEADERS_TIMEOUT_MS: '500' });
  });
  afterAll(() => facade.close());

  it('drops a client that sends its headers too slowly (slowloris)', async () => {
    const socket = connect(facade.port, '127.0.0.1');
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => socket.write('x-slow: 1\r\n'), 100);
    const started = Date.now();
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(drip);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('answers /health, and /readiness after one probe of the upstream', async () => {
    upstream.respond(faults.status(404, '{"error":"No classification"}'));
    const health = await fetch(`${facade.origin}/health`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`${facade.origin}/readiness`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    expect(upstream.requests.map((r) => r.url)).toEqual([
      '/pxm/pimapi/v1/classifications/readiness-probe/groups?pageSize=1',
    ]);
    // A recent answer is enough: no second probe.
    expect((await fetch(`${facade.origin}/readiness`)).status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
  });

  it('is not kept ready by answers from the HTTP cache', async () => {
    upstream.respond(faults.status(200, '{"data":[]}', { 'cache-control': 'max-age=60' }));
    const cached = await startFacade(upstream.url, { PIM_RETRIES: '0', READINESS_MAX_AGE_MS: '1000' });
    try {
      const products = '{ catalogProducts(catalogId: "c1") }';
      expect((await cached.post(products)).body.errors).toBeUndefined();
      upstream.respond(faults.status(503));
      // Served from the cache while the upstream fails: useful, but no sign that the upstream is up.
      expect((await cached.post(products)).body.data.catalogProducts).toEqual({ data: [] });
      expect((await fetch(`${cached.origin}/readiness`)).status).toBe(503);
    } finally {
      await cached.close();
    }
  });

  it('is not ready while the upstream does not answer', async () => {
    upstream.respond(faults.status(503));
    const fresh = await startFacade(upstream.url, { PIM_RETRIES: '0' });
    try {
      const ready = await fetch(`${fresh.origin}/readiness`);
      expect([ready.status, await ready.json()]).toEqual([503, { status: 'unready' }]);
    } finally {
      await fresh.close();
    }
  });
});
