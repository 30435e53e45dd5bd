import type { IncomingMessage, ServerResponse } from 'node:http';
import { onTestFinished } from 'vitest';
import type { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';

/** The owner an upstream names in its answers for each credential (a body never carries the key itself). */
export const owners: Record<string, string> = { 'key-of-a-123': 'A', 'key-of-b-456': 'B' };

/** An upstream answer that names the URL and the owner of the credential it was for, and a `version` mark. */
export const answerFor =
  (version: string) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    const key = owners[String(req.headers['x-api-key'])] ?? 'anonymous';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, key, version }] }));
  };

/** {@link answerFor}, with `headers` on the answer (its caching headers, say). */
export const withHeaders =
  (version: string, headers: Record<string, string>) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    answerFor(version)(req, res);
  };

/** POST /cache/invalidate of `body` on the façade at `origin` with the admin `token`: its status. */
export const purge = async (origin: string, token: string, body: object): Promise<number> =>
  (
    await fetch(`${origin}/cache/invalidate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    })
  ).status;

/** Read `i`: one of the three fields, each with its own ids, under the alias `r<i>`. */
export function read(i: number): string {
  if (i % 3 === 0) return `r${i}: catalogProducts(catalogId: "C${i}")`;
  if (i % 3 === 1) return `r${i}: classificationGroup(classificationId: "K${i}", classificationGroupId: "G${i}")`;
  return `r${i}: classificationGroups(classificationId: "L${i}")`;
}

/** The operations that send reads `from` to `to` (exclusive), `perOperation` at a time. */
export function operations(from: number, to: number, perOperation = 10): string[] {
  const result: string[] = [];
  for (let start = from; start < to; start += perOperation) {
    const fields = [];
    for (let i = start; i < Math.min(to, start + perOperation); i++) fields.push(read(i));
    result.push(`{ ${fields.join(' ')} }`);
  }
  return result;
}

/** The id read `i` puts in its URL, to tell its answer apart. */
export const idOf = (i: number) => `${['C', 'K', 'L'][i % 3]}${i}`;

/**
 * A Redis of the test's own (stopped when it ends), an upstream answering {@link answerFor}('v1'), and a façade of
 * `servers` on both, with `env` over its REDIS_URL, once it has reached Redis.
 */
export async function facadeOnRedis(servers: ReturnType<typeof closedAfterEach>, env: Record<string, string>) {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const upstream = await servers.startUpstream(answerFor('v1'));
  const facade = await servers.startFacade(upstream.url, { REDIS_URL: redis.url, ...env });
  await untilConnected(redis, 2);
  return { redis, upstream, facade };
}
