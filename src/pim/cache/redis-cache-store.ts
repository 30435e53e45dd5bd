import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { byteBounds, createBoundedHashes, type BoundedHashes, type RedisBounds } from '../../redis-bounded.ts';
import { replyWithin, waitedOut } from '../../redis.ts';
import type { CacheKey, CacheStore, CacheValue, GetResult } from './cache-store.ts';

export interface RedisCacheStoreOptions {
  /** A connection made with `createRedis` (prefixed keys, fail-fast while Redis is away). */
  redis: Redis;
  /** Largest body kept; a bigger answer still reaches the caller, it is just not stored. */
  maxEntryBytes: number;
  /** Bytes the fleet's entries may hold in Redis (each variant, its names and its index entries); past it, those soonest to expire go. */
  maxBytes: number;
  /** Longest wait for a reply: a slower lookup is a miss, a slower write is given up. */
  replyTimeoutMs: number;
  /** How long a request whose lookup of a key failed finds that key a miss at once (its retries wait no more). */
  missAfterFailureMs: number;
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
  maxBytes,
  replyTimeoutMs,
  missAfterFailureMs,
  onError,
}: RedisCacheStoreOptions): CacheStore {
  const hashes = createBoundedHashes(redis, 'http-cache');
  const bounds = byteBounds(maxBytes);
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
  // Keys whose older copies stay misses with no floor behind them: a newer answer was too big to keep (its older copy
  // deleted in Redis; only an older answer still coming in then can land there again), or one Redis did not take is
  // now behind an answer of one variant stored since (the other variants' older copies are still there). A mark
  // ends only when pushed out past the bound, and then must not raise the floor (past 65,536 such pages, each fresh
  // copy of every key was a miss). A newer answer stored is no end: it is one variant's, the mark the whole key's.
  const tooBig = new LRUCache<string, number>({ max: 65_536 });
  const markOf = (id: string) => Math.max(superseded.get(id) ?? floor, tooBig.get(id) ?? -Infinity);
  // A mark only moves later.
  const supersede = (id: string, at: number) => void superseded.set(id, Math.max(at, markOf(id)));
  // Redis holds this answer now, of its variant: the key's mark of an answer Redis did not take moves among those that
  // never raise the floor. One no newer than the floor stays visible all the same.
  const taken = (id: string, at: number) => {
    const mark = superseded.get(id);
    if ((mark ?? -Infinity) > at) return;
    if (mark !== undefined) tooBig.set(id, Math.max(mark, tooBig.get(id) ?? -Infinity));
    if (floor >= at) superseded.set(id, at - 1);
    else superseded.delete(id);
  };
  // The keys whose lookup waited out its bound, with the id of the request whose call it was (the `x-request-id` each
  // call carries upstream, the one mark of a request in undici's key): each retry of a call is a new dispatch through
  // the cache, and looked its key up again, waiting on a silent Redis again. Another request looks the key up afresh.
  const failedFor = new LRUCache<string, true>({ max: 65_536, ttl: missAfterFailureMs });
  return {
    async get(key) {
      const id = redisKey(key);
      const request = key.headers?.['x-request-id'];
      const mine = typeof request === 'string' ? `${request} ${id}` : undefined;
      if (mine !== undefined && failedFor.size > 0 && failedFor.get(mine)) return undefined;
      try {
        const variants = await bounded(() => redis.hgetallBuffer(hashes.key(id)));
        const newer = markOf(id);
        // Through the bound's own script: its size leaves the count with it, and a newer answer written into the field
        // since this read stays (an unreadable one counts as older than any).
        const drop = (field: string, version: number) =>
          void bounded(() => hashes.forget(id, field, version)).catch(fail);
        return findVariant(key, variants, drop, newer);
      } catch (error) {
        // Only a lookup that waited: one that failed at once (Redis away, left alone a while) costs a retry nothing.
        if (mine !== undefined && waitedOut(error)) failedFor.set(mine, true);
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
          // holds must not stand in for it, here or on another replica: it goes too, with every variant (as the mark
          // covers them here: one stored under other Vary names may match the same request). A newer one another
          // replica stored stays: gone, an older answer landing after it (its body still coming in) had nothing newer
          // to be kept against, and a replica that had served the newer one served the older.
          if (size > maxEntryBytes) {
            const id = redisKey(key);
            tooBig.set(id, Math.max(value.cachedAt, tooBig.get(id) ?? -Infinity));
            // The mark stays: an older answer may still land after this (its body still coming in, here or on
            // another replica), and is not this one.
            bounded(() => hashes.forget(id, undefined, value.cachedAt)).catch(fail);
            return this.destroy();
          }
          chunks.push(chunk);
          callback();
        },
        final(callback) {
          // A failed write is reported, not raised: the caller already has its answer.
          const id = redisKey(key);
          bounded(() => save(hashes, bounds, key, value, Buffer.concat(chunks)))
            .then(
              (stored) => void (stored && taken(id, value.cachedAt)),
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
      await bounded(() => hashes.forget(redisKey(key))).catch(fail);
    },
  };
}

async function save(
  hashes: BoundedHashes,
  bounds: RedisBounds,
  key: CacheKey,
  value: CacheValue,
  body: Buffer,
): Promise<boolean> {
  const ttlMs = Math.ceil(value.deleteAt) - Date.now();
  if (ttlMs <= 0) return false;
  const { vary, ...rest } = value;
  const varyNames = namesOf(vary);
  const meta: StoredMeta = { ...rest, ...(varyNames ? { varyNames } : {}), bodyBytes: body.length };
  const stored = Buffer.concat([Buffer.from(`${JSON.stringify(meta)}\n`), body]);
  // A variant too big for the bound is not stored, and the older one goes: it must not stand in for this answer.
  // Redis keeps a newer answer of the variant already there (-1): an older one landing later must not replace it.
  return (await hashes.store(redisKey(key), fieldOf(value), stored, ttlMs, bounds, value.cachedAt)) !== -1;
}

function findVariant(
  key: CacheKey,
  variants: Record<string, Buffer>,
  drop: (field: string, version: number) => void,
  newer: number,
): GetResult | undefined {
  const now = Date.now();
  // Answers of one key under other Vary names may match the same request: the newest of them is the answer.
  let found: GetResult | undefined;
  for (const [field, stored] of Object.entries(variants)) {
    const split = stored.indexOf(0x0a);
    const head = readHead(stored, split);
    // Its first line, whole, and all its body.
    const meta = head?.bodyBytes === stored.length - split - 1 ? (head as StoredMeta) : undefined;
    // Expired, or unreadable (cut short, or written in another shape): a miss, and the next answer takes its place.
    if (!meta || !(meta.deleteAt > now)) {
      drop(field, versionOf(head));
      continue;
    }
    if (field !== variantField(meta.varyNames, key.headers)) continue;
    // No newer than an answer Redis did not take (whose time, from its `Date`, may be the same second): a miss, and
    // the next answer's write replaces it.
    if (meta.cachedAt <= newer || (found && found.cachedAt >= meta.cachedAt)) continue;
    const { varyNames, ...value } = meta;
    // The request matched the stored hash, so its own header values are the variant's.
    const vary = varyNames && Object.fromEntries(varyNames.map((name) => [name, key.headers?.[name] ?? null]));
    found = {
      ...value,
      cacheControlDirectives: value.cacheControlDirectives ?? {},
      vary,
      body: stored.subarray(split + 1),
    };
  }
  return found;
}

// The first line's JSON object, or undefined: a stored answer's meta once its body's length is checked.
function readHead(stored: Buffer, split: number): Partial<StoredMeta> | undefined {
  try {
    const head = split > 0 ? (JSON.parse(stored.subarray(0, split).toString('utf8')) as unknown) : undefined;
    return head !== null && typeof head === 'object' ? (head as Partial<StoredMeta>) : undefined;
  } catch {
    return undefined;
  }
}

// The version the bound's script reads in a field, as its Lua `tonumber` does: the first line's cachedAt, else 0.
// Dropped with 0, a field cut short whose first line names a cachedAt was taken for a newer one, and stayed.
function versionOf(head: Partial<StoredMeta> | undefined): number {
  const cachedAt: unknown = head?.cachedAt;
  const version = typeof cachedAt === 'number' || typeof cachedAt === 'string' ? Number(cachedAt) : NaN;
  return Number.isFinite(version) ? version : 0;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

// The hash's name in the family: no space, as the bounded hashes require.
const redisKey = ({ method, origin, path }: CacheKey): string => sha256(JSON.stringify([method, origin, path]));

const namesOf = (vary: CacheValue['vary']) => (vary ? Object.keys(vary).sort() : undefined);

// The field of an answer's variant.
const fieldOf = ({ vary }: CacheValue) => variantField(namesOf(vary), vary);

// Names the variant by a hash of its Vary header values, so no header value is stored in clear.
function variantField(
  names: readonly string[] | undefined,
  headers: Readonly<Record<string, string | string[] | null | undefined>> | undefined,
): string {
  if (!names) return '-';
  return sha256(JSON.stringify(names.map((name) => [name, headers?.[name] ?? null])));
}
