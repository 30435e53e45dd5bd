import { Agent, request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { echo } from '../helpers/upstream.ts';

// A shutdown ends within its grace period whatever a dependency does: main.ts exits 1 when it does not.
const servers = closedAfterEach();
const query = '{ classificationGroups(classificationId: "A") }';
const within = (ms: number, settled: Promise<unknown>) =>
  Promise.race([
    settled.then(
      () => 'closed',
      (error: Error) => `failed: ${error.message}`,
    ),
    new Promise((resolve) => setTimeout(resolve, ms, 'still closing')),
  ]);

it('settles when the OTLP collector refuses the spans left to export', async () => {
  const free = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => free.once('listening', resolve));
  const { port } = free.address() as AddressInfo;
  await new Promise((resolve) => free.close(resolve));
  const { facade } = await servers.start(echo, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
  await facade.post(query);
  // The span waits in the batch; its export at shutdown is refused. A rejection here ended the process in main.ts.
  expect(await within(5_000, facade.server.shutdown())).toBe('closed');
}, 20_000);

it(
  'settles while Redis is frozen, its connections open but silent',
  { tags: ['redis-server'], timeout: 20_000 },
  async () => {
    const redis = await startRedis();
    const { facade } = await servers.start(echo, { REDIS_URL: redis.url });
    await facade.post(query);
    onTestFinished(() => redis.stop());
    redis.freeze();
    expect(await within(4_000, facade.server.shutdown())).toBe('closed');
  },
);

it('does not wait for a background refresh to a PIM that hangs', async () => {
  let hang = false;
  const { upstream, facade } = await servers.start(
    (req, res) => {
      if (hang) return;
      res.setHeader('cache-control', 'max-age=0, stale-while-revalidate=60');
      echo(req, res);
    },
    { SHUTDOWN_GRACE_MS: '500', PIM_TIMEOUT_MS: '8000' },
  );
  await facade.post(query);
  hang = true;
  expect((await facade.post(query)).body.extensions.stale[0].reason).toBe('revalidating');
  await expect.poll(() => upstream.requests.length).toBe(2);
  // No client request is in flight: only the refresh, which waited out its PIM_TIMEOUT_MS before.
  expect(await within(2_000, facade.server.shutdown())).toBe('closed');
}, 20_000);

it('tells a keep-alive client of a @defer answer begun during shutdown to close', async () => {
  const { facade } = await servers.start((req, res) => void setTimeout(() => echo(req, res), 400), {
    PIM_CACHE: 'false',
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  onTestFinished(() => agent.destroy());
  const post = (body: string, accept: string) =>
    new Promise<{ status?: number; connection?: string; error?: string }>((resolve) => {
      const headers = { 'content-type': 'application/json', accept };
      const req = request({ host: '127.0.0.1', port: facade.port, path: '/graphql', method: 'POST', agent, headers });
      req.on('response', (res) =>
        res.resume().on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection })),
      );
      req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code }));
      req.end(JSON.stringify({ query: body }));
    });
  const deferred = post(
    '{ a: classificationGroups(classificationId: "a") ... @defer { b: classificationGroups(classificationId: "b") } }',
    'multipart/mixed',
  );
  // In flight, its head not sent yet; Yoga's multipart answer said `Connection: keep-alive` over the server's close.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const shutdown = facade.server.shutdown();
  expect(await deferred).toMatchObject({ status: 200, connection: 'close' });
  // The next request on that socket is refused cleanly, not reset midway.
  expect(await post('{ __typename }', 'application/json')).not.toEqual({ error: 'ECONNRESET' });
  await shutdown;
}, 20_000);
