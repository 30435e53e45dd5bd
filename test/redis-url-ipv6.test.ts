import { once } from 'node:events';
import { createServer } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createRedis } from '../src/redis.ts';

// REDIS_URL=redis://[::1]:6379 (an IPv6 literal, as an IPv6-only cluster's address may be) is accepted at start;
// WHATWG URL's hostname keeps the brackets, which ioredis then looks up as a name: ENOTFOUND for ever.
it('connects to the IPv6 literal of a REDIS_URL the configuration accepts', async (context) => {
  const server = createServer((socket) => socket.destroy());
  server.listen(0, '::1');
  const listening = await Promise.race([
    once(server, 'listening').then(() => true),
    once(server, 'error').then(() => false),
  ]);
  if (!listening) return context.skip('no IPv6 loopback here');
  onTestFinished(() => void server.close());
  const { port } = server.address() as { port: number };
  const redisUrl = `redis://[::1]:${port}`;
  expect(loadConfig({ REDIS_URL: redisUrl }).pim.stale.redisUrl).toBe(redisUrl);

  let failed: (error: Error) => void = () => {};
  const error = new Promise<Error>((resolve) => (failed = resolve));
  const redis = createRedis(redisUrl, (e) => failed(e), 200);
  onTestFinished(() => redis.disconnect());
  const outcome = await Promise.race([
    once(server, 'connection').then(() => 'connected'),
    error.then((e) => `failed: ${e.message}`),
  ]);
  expect(outcome).toBe('connected');
});
