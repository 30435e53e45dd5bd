import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetricsServer } from '../../src/http/metrics-server.ts';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function listen(metrics: Parameters<typeof createMetricsServer>[0]): Promise<number> {
  server = createMetricsServer(metrics, '/metrics');
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Sends raw bytes and returns the whole answer once the server closes the connection. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('the metrics port refuses like the main port', () => {
  it('a request that is not HTTP gets 400 with a one-line JSON message', async () => {
    const port = await listen(async () => ({ contentType: 'text/plain', body: '' }));
    const answer = await raw(port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\ncontent-type: application\/json/i);
    expect(answer).toContain(
      '{"errors":[{"message":"The request is not valid HTTP/1.1","extensions":{"code":"BAD_REQUEST"}}]}',
    );
  });

  it('a CONNECT gets 405 with a one-line JSON message, not a dropped connection', async () => {
    const port = await listen(async () => ({ contentType: 'text/plain', body: '' }));
    const answer = await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 405 /);
    expect(answer).toContain('{"errors":[{"message":"CONNECT is not served here');
  });

  it('a scrape that fails is a 500 with a JSON message, not an empty body', async () => {
    const port = await listen(() => Promise.reject(new Error('collector failed')));
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      errors: [{ message: expect.stringMatching(/\w+ \w+/), extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
    });
    expect(text).not.toContain('collector failed');
  });
});
