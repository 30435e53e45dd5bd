import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { replyWithin } from '../../redis.ts';
import type { CacheKey, CacheStore, CacheValue, GetResult } from './cache-store.ts';

export interface RedisCacheStoreOptions {
  /** A connection made with `createRedis` (prefixed keys, fail-fast while Redis is away). */
  redis: Redis;
  /** Largest body kept; a bigger answer still reaches the caller, it is just not stored. */
  maxEntryBytes: number;
  /** Longest wait for a reply: a slower lookup is a miss, a slower write is given up. */
  replyTimeoutMs: number;
  /** Told about each failed command; a failed lookup is a miss, a failed write stores nothing. */
  onError: (error: Error) => void;
}

// One variant as stored: the value without its Vary values, which are kept only as a hash, and its body's length.
interface StoredMeta extends Omit<CacheValue, 'vary'> {
  varyNames?: string[];
  bodyBytes: number;
}

/**
 * An undici cache store on Redis that finds entries by exact key only: one hash per method,
 * origin and path (query and credential partition included), whose fields are the `Vary`
 * variants. A lookup is one HGETALL whatever else Redis holds, and an id is never a pattern.
 */
export function createRedisCacheStore({
  redis,
  maxEntryBytes,
  replyTimeoutMs,
  onError,
}: RedisCacheStoreOptions): CacheStore {
  const fail = (error: unknown) => void onError(error instanceof Error ? error : new Error(String(error)));
  const bounded = replyWithin(replyTimeoutMs);
  // Keys whose newer answer Redis did not take (away, frozen, refusing writes): when that answer was stored. What Redis
  // still holds from before is older than what this instance already served, and must not come back once Redis does.
  // Past the bound a mark pushed out still counts, for every key: copies no newer than it are misses here (each read
  // once more from the PIM, its write replacing it), never an answer older than one already served.
  let floor = -Infinity;
  const superseded = new LRUCache<string, number>({
    max: 65_536,
    dispose: (at, _id, reason) => void (reason === 'evict' && (floor = Math.max(floor, at))),
  });
  const markOf = (id: string) => superseded.get(id) ?? floor;
  // A mark only moves later.
  const supersede = (id: string, at: number) => void superseded.set(id, Math.max(at, markOf(id)));
  // Redis holds this answer now: no older mark is about it. One no newer than the floor stays visible all the same.
  const taken = (id: string, at: number) => {
    if ((superseded.get(id) ?? -Infinity) > at) return;
    if (floor >= at) superseded.set(id, at - 1);
    else superseded.delete(id);
  };
  return {
    async get(key) {
      try {
        const id = redisKey(key);
        const variants = await bounded(() => redis.hgetallBuffer(id));
        const newer = markOf(id);
        return findVariant(key, variants, (field) => void redis.hdel(id, field).catch(fail), newer);
      } catch (error) {
        fail(error);
        return undefined;
      }
    },
    createWriteStream(key, value) {
      const chunks: Buffer[] = [];
      let size = 0;
      return new Writable({
        write(chunk: Buffer, _encoding, callback) {
          size += chunk.length;
          // Like undici's memory store: an oversized body is dropped, the answer itself goes on. An older copy Redis
          // holds must not stand in for it.
          if (size > maxEntryBytes) {
            supersede(redisKey(key), value.cachedAt);
            return this.destroy();
          }
          chunks.push(chunk);
          callback();
        },
        final(callback) {
          // A failed write is reported, not raised: the caller already has its answer.
          const id = redisKey(key);
          bounded(() => save(redis, key, value, Buffer.concat(chunks)))
            .then(
              () => taken(id, value.cachedAt),
              (error: unknown) => {
                supersede(id, value.cachedAt);
                fail(error);
              },
            )
            .finally(() => callback());
        },
      });
    },
    async delete(key) {
      await bounded(() => redis.del(redisKey(key))).catch(fail);
    },
  };
}

async function save(redis: Redis, key: CacheKey, value: CacheValue, body: Buffer): Promise<void> {
  const expireAt = Math.ceil(value.deleteAt);
  if (expireAt <= Date.now()) return;
  const { vary, ...rest } = value;
  const varyNames = vary ? Object.keys(vary).sort() : undefined;
  const meta: StoredMeta = { ...rest, ...(varyNames ? { varyNames } : {}), bodyBytes: body.length };
  const id = redisKey(key);
  // NX gives a new key its expiry, GT lets a longer-lived variant extend the key's.
  const results = await redis
    .multi()
    .hset(id, variantField(varyNames, vary), Buffer.concat([Buffer.from(`${JSON.stringify(meta)}\n`), body]))
    .pexpireat(id, expireAt, 'NX')
    .pexpireat(id, expireAt, 'GT')
    .exec();
  const failed = results?.find(([error]) => error)?.[0];
  if (failed) throw failed;
}

function findVariant(
  key: CacheKey,
  variants: Record<string, Buffer>,
  drop: (field: string) => void,
  newer: number,
): GetResult | undefined {
  const now = Date.now();
  for (const [field, stored] of Object.entries(variants)) {
    const split = stored.indexOf(0x0a);
    const meta = readMeta(stored, split);
    // Expired, or unreadable (cut short, or written in another shape): a miss, and the next answer takes its place.
    if (!meta || !(meta.deleteAt > now)) {
      drop(field);
      continue;
    }
    if (field !== variantField(meta.varyNames, key.headers)) continue;
    // No newer than an answer Redis did not take (whose time, from its `Date`, may be the same second): a miss, and
    // the next answer's write replaces it.
    if (meta.cachedAt <= newer) continue;
    const { varyNames, ...value } = meta;
    // The request matched the stored hash, so its own header values are the variant's.
    const vary = varyNames && Object.fromEntries(varyNames.map((name) => [name, key.headers?.[name] ?? null]));
    return {
      ...value,
      cacheControlDirectives: value.cacheControlDirectives ?? {},
      vary,
      body: stored.subarray(split + 1),
    };
  }
  return undefined;
}

function readMeta(stored: Buffer, split: number): StoredMeta | undefined {
  try {
    const meta = JSON.parse(stored.subarray(0, split).toString('utf8')) as StoredMeta | null;
    return split > 0 && meta?.bodyBytes === stored.length - split - 1 ? meta : undefined;
  } catch {
    return undefined;
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

function redisKey({ method, origin, path }: CacheKey): string {
  return `http-cache:${sha256(JSON.stringify([method, origin, path]))}`;
}

// Names the variant by a hash of its Vary header values, so no header value is stored in clear.
function variantField(
  names: readonly string[] | undefined,
  headers: Readonly<Record<string, string | string[] | null | undefined>> | undefined,
): string {
  if (!names) return '-';
  return sha256(JSON.stringify(names.map((name) => [name, headers?.[name] ?? null])));
}
