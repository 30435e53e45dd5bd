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

/** Sends one raw request (fetch would refuse a bad Host) and returns the whole answer as text. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('a Host header that is not a host', () => {
  it.each(['a b', 'a/b?c', '[::1'])('Host: %s gets 400 without a stack, and nothing upstream', async (host) => {
    const body = '{"query":"{ classificationGroups(classificationId: \\"E\\") }"}';
    const answer = await raw(
      facade.port,
      `POST /graphql HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('The Host header is not a valid host');
    expect(answer).not.toMatch(/at |node_modules|TypeError/);
    expect(upstream.requests).toHaveLength(0);
  });
});
