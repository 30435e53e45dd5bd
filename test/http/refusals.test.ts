import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

const fixture = useFacade();

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
  it.each(['a b', 'a/b?c', '[::1'])('Host: %s gets 400 without a stack, and nothing upstream', async (host) => {
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
    expect(answer).toContain('{"errors":[{"message":"The request body is too large"}]}');
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
      errors: [{ message: 'POST without a content type is not accepted; send application/json' }],
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
      errors: [{ message: 'POST with content type application/xml is not accepted; send application/json' }],
    });
  });

  it.each(['/', '/nothing/here'])('GET %s gets 404 and a one-line message', async (path) => {
    const response = await fetch(`${fixture.facade.origin}${path}`);
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(await response.json()).toEqual({ errors: [{ message: 'Nothing is served here; GraphQL is at /graphql' }] });
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});
