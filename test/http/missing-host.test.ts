import type { AddressInfo } from 'node:net';
import { rawExchange } from '../helpers/raw-http.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsServer } from '../../src/http/metrics-server.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request that lacks Host (server.ts checks two of them and a
// malformed one, citing that section). docs/operations.md: "Each refusal carries a one-line JSON message ... and a
// stable code by status: 400 BAD_REQUEST", and `http_requests_refused_total{status="400"}` counts a bad Host.
// node:http's requireHostHeader (on by default) answers a request without Host itself, before the app's handler and
// without its clientError listener: an empty 400 (no JSON, no code, no request id), neither logged nor counted.
let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startUpstream();
  facade = await startFacade(upstream.url, { NODE_ENV: 'production' });
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

const noHost = 'GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nConnection: close\r\n\r\n';
const json = '{"errors":[{"message":';

describe('an HTTP/1.1 request without Host', () => {
  it('gets the 400 with a JSON message and code BAD_REQUEST on the main port, and is counted', async () => {
    const answer = await rawExchange(facade.port, noHost);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\ncontent-type: application\/json/i);
    expect(answer).toContain(json);
    expect(answer).toContain('"code":"BAD_REQUEST"');
    const metrics = await facade.get('/metrics');
    expect(metrics.text).toMatch(/http_requests_refused_total\{status="400"\} [1-9]/);
  });

  it('gets the same JSON 400 in absolute form (the authority does not stand in for a missing Host line)', async () => {
    const answer = await rawExchange(
      facade.port,
      'GET http://a/graphql?query=%7B__typename%7D HTTP/1.1\r\nConnection: close\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"BAD_REQUEST"');
  });

  it("on the metrics port too (docs: Node's own 400 carries the same one-line JSON message)", async () => {
    const server = createMetricsServer(async () => ({ contentType: 'text/plain', body: '' }), '/metrics');
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await rawExchange(
        (server.address() as AddressInfo).port,
        'GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n',
      );
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('"code":"BAD_REQUEST"');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
