import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startUpstream();
  facade = await startFacade(upstream.url);
});
afterAll(async () => {
  await facade.close();
  await upstream.close();
});

/**
 * Sends a request head and the first bytes of its body, never the rest, and returns what the
 * server answered before it closed the connection (or '' if it did not within two seconds).
 */
function partial(port: number, head: string, firstBytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head + firstBytes));
    let answer = '';
    const timer = setTimeout(() => (socket.destroy(), resolve('')), 2_000);
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => (clearTimeout(timer), resolve(answer)));
    socket.on('error', reject);
  });
}

describe('a GET request with a body past the limit', () => {
  it.each(['/graphql?query=%7B__typename%7D', '/health'])('GET %s gets 413 and a closed connection', async (path) => {
    const answer = await partial(
      facade.port,
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 314572800\r\n\r\n`,
      'x'.repeat(1_000),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain('{"errors":[{"message":"The request body is too large"}]}');
  });

  it('a GET with a body under the limit is still answered', async () => {
    const response = await fetch(`${facade.url}?query=%7B__typename%7D`, {
      method: 'GET',
      headers: { 'content-length': '0' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('refusals Yoga sends without a body', () => {
  it('POST /graphql with no body gets 415 and a one-line message', async () => {
    const response = await fetch(facade.url, { method: 'POST' });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      errors: [{ message: 'POST without a content type is not accepted; send application/json' }],
    });
  });

  it('POST /graphql as application/xml gets 415 naming the type', async () => {
    const response = await fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<query/>',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({
      errors: [{ message: 'POST with content type application/xml is not accepted; send application/json' }],
    });
  });

  it.each(['/', '/nothing/here'])('GET %s gets 404 and a one-line message', async (path) => {
    const response = await fetch(`${facade.origin}${path}`);
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(await response.json()).toEqual({ errors: [{ message: 'Nothing is served here; GraphQL is at /graphql' }] });
    expect(upstream.requests).toHaveLength(0);
  });
});
