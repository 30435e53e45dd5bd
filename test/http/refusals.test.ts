import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startFacade, useFacade } from '../helpers/facade.ts';

// Headers must arrive within half a second, so the 408 below comes quickly.
const fixture = useFacade({ HTTP_HEADERS_TIMEOUT_MS: '500' });

/**
 * Sends raw bytes (fetch would refuse a bad Host or a short body), ending the request when
 * `whole`, and returns what the server answered before it closed the connection (or '' if it
 * did not within two seconds).
 */
function raw(port: number, bytes: string, whole: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => (whole ? socket.end(bytes) : socket.write(bytes)));
    let answer = '';
    const timer = setTimeout(() => (socket.destroy(), resolve('')), 2_000);
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => (clearTimeout(timer), resolve(answer)));
    socket.on('error', reject);
  });
}

describe('a Host header that is not a host', () => {
  // The last four have a host's shape, but no URL parser takes them: a port past 65535, bad IPv6 literals.
  it.each(['a b', 'a/b?c', '[::1', 'localhost:99999', '[::1]:65536', '[:::]', '[1.2.3.4.5]'])(
    'Host: %s gets 400 without a stack, and nothing upstream',
    async (host) => {
      const body = '{"query":"{ classificationGroups(classificationId: \\"E\\") }"}';
      const answer = await raw(
        fixture.facade.port,
        `POST /graphql HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        true,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('The Host header is not a valid host');
      expect(answer).not.toMatch(/at |node_modules|TypeError/);
      expect(fixture.upstream.requests).toHaveLength(0);
    },
  );
});

// RFC 9112 §3.2: a request with more than one Host header is answered 400. Two hosts leave which one is meant to
// whoever reads them: a proxy or cache in front may key on the other.
describe('two Host headers', () => {
  it.each([
    ['differing', 'a.example', 'b.example'],
    ['the same', 'localhost', 'localhost'],
    ['spelt differently', 'localhost', 'localhost'],
  ])('two Host headers (%s) get 400, and nothing upstream', async (kind, first, second) => {
    const name = kind === 'spelt differently' ? 'HOST' : 'Host';
    const body = '{"query":"{ classificationGroups(classificationId: \\"E\\") }"}';
    const answer = await raw(
      fixture.facade.port,
      `POST /graphql HTTP/1.1\r\nHost: ${first}\r\n${name}: ${second}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      true,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"BAD_REQUEST"');
    expect(answer).toContain('A request has one Host header');
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});

// RFC 9110 §5.3: a header that is not a list is sent once. Node keeps the first Authorization and joins two X-API-KEY
// as `a, b`: a gateway in front that checks the other one disagrees with the PIM on who is asking.
describe('a credential header sent twice', () => {
  it.each([
    ['Authorization', 'Bearer first-token', 'Bearer other-token'],
    ['X-API-KEY', 'first-key', 'other-key'],
  ])('two %s headers of different values get 400, and nothing upstream', async (name, first, second) => {
    const body = '{"query":"{ classificationGroups(classificationId: \\"E\\") }"}';
    const answer = await raw(
      fixture.facade.port,
      `POST /graphql HTTP/1.1\r\nHost: localhost\r\n${name}: ${first}\r\nContent-Type: application/json\r\n${name.toUpperCase()}: ${second}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      true,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"BAD_REQUEST"');
    expect(answer).toContain(
      `A request has one ${name.toLowerCase() === 'authorization' ? 'Authorization' : 'X-Api-Key'} header`,
    );
    expect(fixture.upstream.requests).toHaveLength(0);
  });

  // No doubt who is asking: one of each, the same value twice, an empty one beside a value; and the probes, which no
  // credential reaches.
  it.each([
    ['one of each', 'POST /graphql', 'Authorization: Bearer a-token\r\nX-API-KEY: a-key'],
    ['the same value twice', 'POST /graphql', 'Authorization: Bearer a-token\r\nauthorization: Bearer a-token'],
    ['an empty one beside a value', 'POST /graphql', 'X-API-KEY: \r\nx-api-key: a-key'],
    ['two values on a probe', 'GET /health', 'Authorization: Bearer a\r\nAuthorization: Bearer b'],
  ])('%s is served', async (_kind, line, headers) => {
    const body = line.startsWith('POST') ? '{"query":"{ __typename }"}' : '';
    const answer = await raw(
      fixture.facade.port,
      `${line} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      true,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  // Node joins the lines of a header it does not know (`k, k`, `, k`), which the PIM would read as one unknown key,
  // and keeps the first Authorization, empty or not.
  it.each([
    ['the same key twice', 'x-api-key', 'X-API-KEY: a-key\r\nx-api-key: a-key', 'a-key'],
    ['an empty key beside one', 'x-api-key', 'X-API-KEY: \r\nx-api-key: a-key', 'a-key'],
    ['a key beside an empty one', 'x-api-key', 'X-API-KEY: a-key\r\nx-api-key:  ', 'a-key'],
    ['a token after an empty one', 'authorization', 'Authorization:\r\nAuthorization: Bearer t', 'Bearer t'],
  ])('%s goes upstream once', async (_kind, name, headers, sent) => {
    const body = '{"query":"{ classificationGroups(classificationId: \\"E\\") }"}';
    await raw(
      fixture.facade.port,
      `POST /graphql HTTP/1.1\r\nHost: localhost\r\n${headers}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      true,
    );
    expect(fixture.upstream.requests.map((call) => call.headers[name])).toEqual([sent]);
  });

  // A proxy chain adds its own X-Forwarded-For line (HAProxy's `option forwardfor`): a list, never refused.
  it('a list header forwarded as a credential may come twice', async () => {
    const facade = await startFacade(fixture.upstream.url, { PIM_FORWARD_HEADERS: 'x-api-key,x-forwarded-for' });
    try {
      const body = '{"query":"{ __typename }"}';
      const answer = await raw(
        facade.port,
        `POST /graphql HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 10.0.0.1\r\nX-Forwarded-For: 10.0.0.2\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        true,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      await facade.close();
    }
  });
});

// RFC 9112 §3.2.2: a server accepts a request target in absolute form (as sent to a proxy), and reads the host from it
// rather than from Host.
describe('a request target in absolute form', () => {
  it('POST http://host/graphql is served as POST /graphql', async () => {
    const body = '{"query":"{ __typename }"}';
    const answer = await raw(
      fixture.facade.port,
      `POST http://localhost:${fixture.facade.port}/graphql HTTP/1.1\r\nHost: localhost:${fixture.facade.port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      true,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('{"data":{"__typename":"Query"}}');
  });

  it.each(['HTTP://localhost/health', 'http://localhost?x=1', 'http://localhost:80/health?x=1'])(
    'GET %s is served as its origin form',
    async (target) => {
      const answer = await raw(fixture.facade.port, `GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`, true);
      expect(answer).toMatch(target.includes('health') ? /^HTTP\/1\.1 200 / : /^HTTP\/1\.1 404 /);
    },
  );

  it.each(['http://a b/health', 'http://user@localhost/health', 'http://localhost/x/../health'])(
    'GET %s is refused as its origin form with that Host would be',
    async (target) => {
      const answer = await raw(fixture.facade.port, `GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`, true);
      expect(answer).toMatch(/^HTTP\/1\.1 (400|404) /);
      expect(answer).not.toMatch(/"status":"ok"/);
    },
  );
});

// A target neither a path nor an absolute URL went to Yoga as it came, which put its text before the path of the URL
// it built: `*/metrics` answered the metrics, `*@127.0.0.1:1/graphql` had another host, `*:x/graphql` a 500 with a stack.
describe('a request target in no form served', () => {
  it.each(['*', '*/metrics', '*@127.0.0.1:1/graphql?query=%7B__typename%7D', '*:x/graphql'])(
    'GET %s gets 400 without a stack',
    async (target) => {
      const answer = await raw(fixture.facade.port, `GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`, true);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('A request target is a path');
      expect(answer).not.toMatch(/at |node_modules|TypeError|# HELP/);
    },
  );

  // A proxy's rule on `/metrics` or `/cache/invalidate` reads the target as sent: an absolute form would pass it.
  it('GET http://localhost/metrics gets 404, where GET /metrics gets the metrics', async () => {
    const absolute = await raw(
      fixture.facade.port,
      'GET http://localhost/metrics HTTP/1.1\r\nHost: localhost\r\n\r\n',
      true,
    );
    expect(absolute).toMatch(/^HTTP\/1\.1 404 /);
    expect(absolute).not.toContain('# HELP');
    const origin = await raw(
      fixture.facade.port,
      'GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      true,
    );
    expect(origin).toMatch(/^HTTP\/1\.1 200 /);
  });
});

// Yoga runs GraphQL at any URL ending in its endpoint and answers its own health check at any ending in `/health`:
// `POST /v1/graphql` ran past a proxy's rules on `/graphql`, `POST /metrics?x=/graphql` past HTTP_MAX_IN_FLIGHT too
// (the metrics are never refused for load), `DELETE /anything/health` past the probes' 405. Only the paths served
// reach Yoga.
describe('a path that only ends like a served one', () => {
  const body = '{"query":"{ classificationGroups(classificationId: \\"E\\") }"}';
  it.each(['/v1/graphql', '/metrics?x=/graphql', '/public?/graphql/', '/health?x=/graphql'])(
    'POST %s gets 404, and nothing upstream',
    async (target) => {
      const answer = await raw(
        fixture.facade.port,
        `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        true,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 40[45] /);
      expect(answer).not.toContain('"data"');
      expect(fixture.upstream.requests).toHaveLength(0);
    },
  );

  it('GET /static/app.js?query=… gets 404, and nothing upstream', async () => {
    const response = await fetch(`${fixture.facade.origin}/static/app.js?query=%7B__typename%7D&x=/graphql`);
    expect(response.status).toBe(404);
    expect((await response.json()).errors[0].extensions.code).toBe('PATH_NOT_FOUND');
  });

  it('DELETE /anything/health gets 404', async () => {
    const response = await fetch(`${fixture.facade.origin}/anything/health`, { method: 'DELETE' });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-yoga-id')).toBeNull();
  });

  it('POST /metrics gets 405 naming GET and HEAD', async () => {
    const response = await fetch(`${fixture.facade.origin}/metrics?x=/graphql`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

// RFC 9110 §8.4: a body in a content coding the server does not decode is refused with 415. Read as it came, a WAF in
// front that decodes it inspects another body than the one run; a real gzip body got "invalid JSON".
describe('a request body in a content coding', () => {
  it.each(['gzip', 'br, gzip', 'x-made-up'])(
    'Content-Encoding: %s gets 415 naming identity, and nothing upstream',
    async (coding) => {
      const body = '{"query":"{ classificationGroups(classificationId: \\"E\\") }"}';
      const answer = await raw(
        fixture.facade.port,
        `POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Encoding: ${coding}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        true,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 415 /);
      expect(answer).toMatch(/\r\naccept-encoding: identity\r\n/i);
      expect(answer).toContain('"code":"UNSUPPORTED_MEDIA_TYPE"');
      expect(fixture.upstream.requests).toHaveLength(0);
    },
  );

  it('Content-Encoding: identity is served', async () => {
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      body: '{"query":"{ __typename }"}',
    });
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('a GET request with a body past the limit', () => {
  it.each(['/graphql?query=%7B__typename%7D', '/health'])('GET %s gets 413 and a closed connection', async (path) => {
    const answer = await raw(
      fixture.facade.port,
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 314572800\r\n\r\n${'x'.repeat(1_000)}`,
      false,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain(
      '{"errors":[{"message":"The request body is too large","extensions":{"code":"REQUEST_TOO_LARGE"}}]}',
    );
  });

  it('a GET with a body under the limit is still answered', async () => {
    const response = await fetch(`${fixture.facade.url}?query=%7B__typename%7D`, {
      method: 'GET',
      headers: { 'content-length': '0' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('refusals Yoga sends without a body', () => {
  it('POST /graphql with no body gets 415 and a one-line message', async () => {
    const response = await fetch(fixture.facade.url, { method: 'POST' });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'POST without a content type is not accepted; send application/json',
          extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' },
        },
      ],
    });
  });

  it('POST /graphql as application/xml gets 415 naming the type', async () => {
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<query/>',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'POST with content type application/xml is not accepted; send application/json',
          extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' },
        },
      ],
    });
  });

  it.each(['/', '/nothing/here'])('GET %s gets 404 and a one-line message', async (path) => {
    const response = await fetch(`${fixture.facade.origin}${path}`);
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(await response.json()).toEqual({
      errors: [{ message: 'Nothing is served here; GraphQL is at /graphql', extensions: { code: 'PATH_NOT_FOUND' } }],
    });
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});

/** What one refusal looked like: status, content type, and the message of its JSON body (undefined if none). */
interface Refusal {
  status: number;
  type: string | null;
  message?: unknown;
  code?: unknown;
}

const errorOf = (text: string): { message?: unknown; code?: unknown } => {
  try {
    const [error] = JSON.parse(text).errors;
    return { message: error.message, code: error.extensions?.code };
  } catch {
    return {};
  }
};

async function viaFetch(path: string, init: RequestInit = {}): Promise<Refusal> {
  const response = await fetch(`${fixture.facade.origin}${path}`, init);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    ...errorOf(await response.text()),
  };
}

/** Sends raw bytes, leaving the request unfinished, and reads whatever the server answers before closing. */
function viaSocket(bytes: string): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const socket = connect(fixture.facade.port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    const timer = setTimeout(() => socket.destroy(new Error(`no answer within 5 s to ${bytes.slice(0, 40)}`)), 5_000);
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
        type: /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1] ?? null,
        ...errorOf(/\r\ntransfer-encoding: chunked/i.test(head) ? dechunk(body) : body),
      });
    });
  });
}

/** The payload of a chunked body: each chunk is its size in hex, CRLF, the bytes, CRLF. */
function dechunk(body: string): string {
  let payload = '';
  for (let at = 0; ;) {
    const end = body.indexOf('\r\n', at);
    const size = parseInt(body.slice(at, end), 16);
    if (!(size > 0)) return payload;
    payload += body.slice(end + 2, end + 2 + size);
    at = end + 2 + size + 2;
  }
}

const query = encodeURIComponent('{ __typename }');
const json = { 'content-type': 'application/json' };
const body = JSON.stringify({ query: '{ __typename }' });
const refusals: Array<[string, number, () => Promise<Refusal>]> = [
  [
    'GET with an Accept nothing here is',
    406,
    () => viaFetch(`/graphql?query=${query}`, { headers: { accept: 'application/xml' } }),
  ],
  [
    'POST with an Accept nothing here is',
    406,
    () => viaFetch('/graphql', { method: 'POST', headers: { ...json, accept: 'text/csv' }, body }),
  ],
  ['PUT', 405, () => viaFetch('/graphql', { method: 'PUT', headers: json, body })],
  ['a mutation over GET', 405, () => viaFetch(`/graphql?query=${encodeURIComponent('mutation { x }')}`)],
  ['DELETE /health', 405, () => viaFetch('/health', { method: 'DELETE' })],
  ['POST /readiness', 405, () => viaFetch('/readiness', { method: 'POST', headers: json, body })],
  ['POST without a content type', 415, () => viaFetch('/graphql', { method: 'POST', body })],
  [
    'POST as a form',
    415,
    () => viaFetch('/graphql', { method: 'POST', headers: { 'content-type': 'text/plain' }, body }),
  ],
  ['a path that is not served', 404, () => viaFetch('/nothing')],
  ['GET without a query', 400, () => viaFetch('/graphql')],
  ['POST with invalid JSON', 400, () => viaFetch('/graphql', { method: 'POST', headers: json, body: '{' })],
  ['GET with variables that are not JSON', 400, () => viaFetch(`/graphql?query=${query}&variables=%7Bbad`)],
  ['GET with extensions that are not JSON', 400, () => viaFetch(`/graphql?query=${query}&extensions=%7Bbad`)],
  ['a Host that is not a host', 400, () => viaSocket('GET /health HTTP/1.1\r\nHost: a b\r\n\r\n')],
  ['a chunked body', 411, () => viaSocket('POST /graphql HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n')],
  [
    'a body past the limit',
    413,
    () => viaSocket('POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n'),
  ],
  [
    'a head past the limit',
    431,
    () => viaSocket(`GET /graphql HTTP/1.1\r\nHost: a\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`),
  ],
  ['a request line that is not HTTP', 400, () => viaSocket('NOT HTTP AT ALL\r\n\r\n')],
  ['a header line that is not a header', 400, () => viaSocket('GET /health HTTP/1.1\r\nHost: a\r\nNo Colon\r\n\r\n')],
  ['headers too slow', 408, () => viaSocket('GET /health HTTP/1.1\r\nHost: a\r\n')],
  // Node answered an Expect it does not know with a bare 417 of its own: no JSON, no code, no id, no log line.
  [
    'an Expect other than 100-continue',
    417,
    () =>
      viaSocket(
        'POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nExpect: x\r\nContent-Length: 2\r\n\r\n{}',
      ),
  ],
  // Yoga's URL parser drops a fragment: `/metrics#x` reached the metrics past a proxy rule on `/metrics`.
  ...['/metrics#x', '/graphql#?query=%7B__typename%7D', '/graphql?query=%7B__typename%7D#x'].map(
    (target): [string, number, () => Promise<Refusal>] => [
      `the target ${target}, with a fragment`,
      400,
      () => viaSocket(`GET ${target} HTTP/1.1\r\nHost: a\r\n\r\n`),
    ],
  ),
  // Node's server drops a CONNECT without a word unless told otherwise.
  ['CONNECT', 405, () => viaSocket('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')],
  // Yoga's URL parser resolves them, so `/x/../metrics` reached the metrics past a proxy rule on `/metrics`.
  ...['/x/../metrics', '/x/%2E%2e/metrics', '/x/..\\metrics', '/x\\..\\metrics', '/graphql/./', '//graphql'].map(
    (path): [string, number, () => Promise<Refusal>] => [
      `the path ${path}, not in its normal form`,
      404,
      () => viaSocket(`GET ${path}?query=%7B__typename%7D HTTP/1.1\r\nHost: a\r\n\r\n`),
    ],
  ),
];

// The codes docs/operations.md promises, read from its list ("400 `BAD_REQUEST`, 404 `PATH_NOT_FOUND`, …"), so the
// test holds the code to what users read rather than to a copy of src/errors.ts.
const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const promised = operations.slice(
  operations.indexOf('Each refusal carries'),
  operations.indexOf('refusals.test.ts sends'),
);
const documentedCodes = Object.fromEntries(
  [...promised.matchAll(/(\d{3}) `([A-Z_]+)`/g)].map(([, s, c]) => [Number(s), c]),
);

it.each([
  ['PUT /graphql', '/graphql', 'PUT', 'GET, HEAD, POST'],
  ['DELETE /health', '/health', 'DELETE', 'GET, HEAD'],
  ['POST /readiness', '/readiness', 'POST', 'GET, HEAD'],
])('%s: 405 names the methods served in Allow', async (_name, path, method, allowed) => {
  const response = await fetch(`${fixture.facade.origin}${path}`, { method });
  await response.arrayBuffer();
  expect([response.status, response.headers.get('allow')]).toEqual([405, allowed]);
});

describe('every refusal says what to send instead', () => {
  it.each(refusals)('%s: %i with a JSON message and a stable code', async (_name, status, send) => {
    const refusal = await send();
    expect(refusal.status).toBe(status);
    expect(refusal.type).toMatch(/^application\/json/);
    expect(refusal.message).toEqual(expect.stringMatching(/\w+ \w+/));
    // As every GraphQL error has one: a client branches on the code, not on the words (docs/operations.md's list).
    expect(refusal.code).toBe(documentedCodes[status]);
  });
});

// Most often a long query sent as a GET (a client's GET-for-queries), which said only "fewer or shorter headers".
it('431 for a long GET says to send the query as a POST', async () => {
  const refusal = await viaSocket(`GET /graphql?query=${'%7B__typename%7D'.repeat(2_000)} HTTP/1.1\r\nHost: a\r\n\r\n`);
  expect(refusal.status).toBe(431);
  expect(refusal.message).toMatch(/POST/);
});

describe('406', () => {
  it('is answered before the operation runs: nothing reaches the PIM', async () => {
    fixture.upstream.reset();
    for (const accept of ['application/xml', 'application/json; charset=iso-8859-1', 'image/*']) {
      const refusal = await viaFetch('/graphql', {
        method: 'POST',
        headers: { ...json, accept },
        body: JSON.stringify({ query: '{ catalogProducts(catalogId: "NOT-ACCEPTED") }' }),
      });
      expect([accept, refusal.status, refusal.code]).toEqual([accept, 406, 'NOT_ACCEPTABLE']);
    }
    expect(fixture.upstream.requests).toHaveLength(0);
  });

  // graphql-request's default Accept: a @defer it sends cannot be answered, and Yoga found out after the PIM calls.
  it('refuses an operation that would stream to a client that takes no stream before it runs', async () => {
    fixture.upstream.reset();
    const deferred = '{ a: catalogProducts(catalogId: "A") ... @defer { b: catalogProducts(catalogId: "B") } }';
    const accept = 'application/graphql-response+json, application/json';
    const refusal = await viaFetch('/graphql', {
      method: 'POST',
      headers: { ...json, accept },
      body: JSON.stringify({ query: deferred }),
    });
    expect([refusal.status, refusal.code]).toEqual([406, 'NOT_ACCEPTABLE']);
    expect(fixture.upstream.requests).toHaveLength(0);
    // Not streamed (`if: false`): answered as one body.
    const query = 'query($s: Boolean) { a: catalogProducts(catalogId: "A") ... @defer(if: $s) { __typename } }';
    const plain = await fetch(`${fixture.facade.origin}/graphql`, {
      method: 'POST',
      headers: { ...json, accept },
      body: JSON.stringify({ query, variables: { s: false } }),
    });
    expect(plain.status).toBe(200);
    // Streamed by its variable's default: refused before any call too.
    fixture.upstream.reset();
    const byDefault =
      'query($s: Boolean = true) { a: catalogProducts(catalogId: "A") ... @defer(if: $s) { b: catalogProducts(catalogId: "B") } }';
    const refused = await viaFetch('/graphql', {
      method: 'POST',
      headers: { ...json, accept },
      body: JSON.stringify({ query: byDefault }),
    });
    expect([refused.status, fixture.upstream.requests.length]).toEqual([406, 0]);
  });

  // Under @skip/@include whose values are known, a @defer that certainly runs is refused before any call.
  it.each([
    ['@include(if: true)', '... @include(if: true) { ... @defer { b: catalogProducts(catalogId: "B") } }', undefined],
    ['@skip(if: false)', '... @defer @skip(if: false) { b: catalogProducts(catalogId: "B") }', undefined],
    [
      '@skip(if: $s), $s false',
      '... @skip(if: $s) { ... @defer { b: catalogProducts(catalogId: "B") } }',
      { s: false },
    ],
  ])('refuses a @defer under %s before any call', async (_name, selection, variables) => {
    fixture.upstream.reset();
    const declared = variables ? '($s: Boolean!)' : '';
    const query = `query${declared} { a: catalogProducts(catalogId: "A") ${selection} }`;
    const refusal = await viaFetch('/graphql', {
      method: 'POST',
      headers: { ...json, accept: 'application/graphql-response+json, application/json' },
      body: JSON.stringify({ query, variables }),
    });
    expect([refusal.status, fixture.upstream.requests.length]).toEqual([406, 0]);
  });

  // A variable named like a property every object has is still read from the variables sent (here by its default).
  it('reads a variable named toString from the variables, not from their prototype', async () => {
    fixture.upstream.reset();
    const query =
      'query($toString: Boolean = false) { a: catalogProducts(catalogId: "A") ... @skip(if: $toString) { ... @defer { b: catalogProducts(catalogId: "B") } } }';
    const refusal = await viaFetch('/graphql', {
      method: 'POST',
      headers: { ...json, accept: 'application/json' },
      body: JSON.stringify({ query, variables: {} }),
    });
    expect([refusal.status, fixture.upstream.requests.length]).toEqual([406, 0]);
  });

  // Only the operation run counts, and only what it certainly runs.
  it.each([
    [
      'another operation of the document',
      { query: 'query Plain { __typename } query Deferred { ... @defer { __typename } }', operationName: 'Plain' },
    ],
    [
      'a @defer under @include(if: false)',
      {
        query: 'query($v: Boolean) { ... @include(if: false) { ... @defer(if: $v) { __typename } } }',
        variables: { v: true },
      },
    ],
  ])('answers an operation that does not stream beside %s', async (_name, request) => {
    const response = await fetch(`${fixture.facade.origin}/graphql`, {
      method: 'POST',
      headers: { ...json, accept: 'application/graphql-response+json, application/json' },
      body: JSON.stringify(request),
    });
    expect(response.status).toBe(200);
  });

  // What clients send: Yoga's rules (wildcards; a charset other than UTF-8 rules a type out; q-values unread).
  it.each([
    '*/*',
    'application/*',
    'APPLICATION/JSON',
    'application/graphql-response+json; charset=utf-8, application/json; q=0.9',
    'multipart/mixed;deferSpec=20220824, application/json',
    'text/event-stream',
    'text/html, */*;q=0.1',
    '',
  ])('takes Accept: %s', async (accept) => {
    const response = await fetch(`${fixture.facade.origin}/graphql`, {
      method: 'POST',
      headers: { ...json, accept },
      body,
    });
    expect(response.status).toBe(200);
  });

  it('names the Accept it cannot meet and the types it can send', async () => {
    const refusal = await viaFetch(`/graphql?query=${query}`, { headers: { accept: 'application/xml' } });
    expect(refusal.message).toBe(
      'No answer can be sent as application/xml; accept text/event-stream or multipart/mixed or application/graphql-response+json or application/json',
    );
  });
});

describe('a refusal that names what the client sent', () => {
  const long = `application/${'x'.repeat(12_000)}`;
  it.each<[string, () => Promise<Refusal>]>([
    ['406', () => viaFetch(`/graphql?query=${query}`, { headers: { accept: long } })],
    ['415', () => viaFetch('/graphql', { method: 'POST', headers: { 'content-type': long }, body })],
  ])('%s stays short whatever the header it names', async (status, send) => {
    const refusal = await send();
    expect(refusal.status).toBe(Number(status));
    expect(String(refusal.message).length).toBeLessThan(300);
  });
});

// Yoga adds the JSON parser's own error (name, and a message quoting the body back) to its refusal.
describe('a POST body that is not JSON', () => {
  it('is refused with the code alone: no parser detail, nothing of the body', async () => {
    const response = await fetch(`${fixture.facade.origin}/graphql`, {
      method: 'POST',
      headers: json,
      body: `{"query": "{ __typename }", "secret": ${'s'.repeat(50)}`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }],
    });
  });
});

// JSON.parse takes any depth, JSON.stringify does not: the result cache's key once threw with it (a 500).
describe('variables nested 5,000 deep', () => {
  it('are answered as any unused variable is, not with a 500', async () => {
    const answer = await fixture.facade.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"query":"{ __typename }","variables":{"x":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { __typename: 'Query' } });
  });
});
