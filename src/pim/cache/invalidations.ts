import { randomUUID } from 'node:crypto';
import type { SharedRedis } from './shared-redis.ts';
import { alsoEnded, tagsOf } from './tags.ts';

/** The tag that matches every answer. */
export const ALL = 'all';

// One hash for the fleet: field = tag, value = epoch ms of its latest invalidation.
const HASH = 'invalidated';
// Among its fields, a name the first invalidation gives the record (no time: every version skips it). A different
// name, or none, after one was read: the record was lost (FLUSHALL, a Redis restarted empty, an eviction), with
// whatever invalidations an instance had not read yet.
const EPOCH = 'record';

/**
 * Tags the record holds at most. Past it, the record becomes one invalidation of everything at the latest time:
 * safe (all answers stored before then go, which each tag's entry would only have done in part), and every
 * replica reads the whole record each poll, which at 100,000 tags took longer than REDIS_TIMEOUT_MS.
 */
export const MAX_INVALIDATED_TAGS = 1_000;

// Names a new record, sets the tag's time, then folds the record into ALL when it has grown past its bound. KEYS: the
// hash; ARGV: tag, epoch ms, most tags, a name.
const recordScript = `
redis.call('HSETNX', KEYS[1], '${EPOCH}', ARGV[4])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[3]) then
  local latest = 0
  for _, ms in ipairs(redis.call('HVALS', KEYS[1])) do
    -- Lua reads inf (and nan) where JavaScript does not: a time every instance reads, or none.
    local at = tonumber(ms)
    if at and at < math.huge then latest = math.max(latest, at) end
  end
  redis.call('UNLINK', KEYS[1])
  redis.call('HSET', KEYS[1], '${ALL}', latest)
  return redis.call('HGET', KEYS[1], '${ALL}')
end
return false
`;

export interface InvalidationsOptions {
  /** Shared with the other instances; absent, invalidations stay in this process. */
  shared: SharedRedis | undefined;
  /** How often the fleet's invalidations are read from Redis. */
  pollMs: number;
  /** Told when an invalidation (here or elsewhere) ends the freshness of some answers. */
  onChange: () => void;
  onError: (error: Error) => void;
}

/** When answers were last invalidated, per tag; an answer stored before that is no longer fresh. */
export interface Invalidations {
  /** Ends the freshness of every answer tagged `tag` (or of all, for {@link ALL}) stored until now. */
  invalidate(tag: string): Promise<void>;
  /** Epoch ms of the latest invalidation that matches the upstream `path`; 0 when none. */
  since(path: string): number;
  close(): void;
}

/**
 * Creates the invalidation record. Lookups read a local copy, so they cost no round trip; with
 * Redis every instance writes there and reads the fleet's record every `pollMs`, so an
 * invalidation sent to one instance ends freshness on all of them within that time.
 */
export function createInvalidations({ shared, pollMs, onChange, onError }: InvalidationsOptions): Invalidations {
  const at = new Map<string, number>();
  const note = (tag: string, ms: number) => {
    // One no later than an invalidation of everything adds nothing (a fold dropped it on purpose): else every poll
    // of a record another version never folds would refill the map, fold it and flush the caches again.
    if (Math.max(at.get(tag) ?? 0, at.get(ALL) ?? 0) >= ms) return false;
    at.set(tag, ms);
    const wider = alsoEnded(tag);
    if (wider !== undefined && (at.get(wider) ?? 0) < ms) at.set(wider, ms);
    // The same fold as the fleet's record: everything stored before the latest invalidation goes.
    if (at.size > MAX_INVALIDATED_TAGS) {
      const latest = Math.max(...at.values());
      at.clear();
      at.set(ALL, latest);
    }
    return true;
  };
  shared?.redis.defineCommand('recordInvalidation', { numberOfKeys: 1, lua: recordScript });
  // The fleet's record as last read. A time that changed since is an invalidation made since, by a replica whose
  // clock may be off: it counts from when this instance reads it (behind, the answers stored in between would stay
  // fresh for their whole lifetime; ahead, every answer stored until then would not be). The first read, at now at most.
  let seen: Record<string, string> | undefined;
  // The record's name as last read (or folded away); undefined until one is.
  let epoch: string | undefined;
  const poll = async () => {
    const record = await shared!.within(() => shared!.redis.hgetall(HASH)).catch((error: Error) => void onError(error));
    if (!record) return;
    const now = Date.now();
    // Lost since the last read: what was invalidated in between is unknown here, so everything stored until now goes.
    let changed = epoch !== undefined && record[EPOCH] !== epoch && note(ALL, now);
    epoch = record[EPOCH];
    for (const [tag, ms] of Object.entries(record)) {
      // A time this version cannot read (written by another, or by hand) is no invalidation: as NaN it would make
      // every later lookup of its tag's paths NaN, which compares as "never invalidated", whatever came after.
      if (!Number.isFinite(Number(ms))) continue;
      const made = seen && seen[tag] !== ms ? now : Math.min(Number(ms), now);
      changed = note(tag, made) || changed;
    }
    seen = record;
    if (changed) onChange();
  };
  // Read once the connection is up (at start, and after each reconnection, to catch up), then every
  // pollMs. A read before that fails at once (no offline queue), and would be logged as Redis failing.
  const timer = shared ? setInterval(() => void poll(), pollMs).unref() : undefined;
  const connected = () => void poll();
  shared?.redis.on('ready', connected);
  if (shared?.redis.status === 'ready') void poll();
  return {
    async invalidate(tag) {
      const now = Date.now();
      note(tag, now);
      onChange();
      if (!shared) return;
      const redis = shared.redis as typeof shared.redis & {
        recordInvalidation(...args: Array<string | number>): Promise<unknown>;
      };
      // Counted and logged as every Redis failure is; the caller is told too (a 503: the fleet was not).
      const folded = await shared
        .within(() => redis.recordInvalidation(HASH, tag, now, MAX_INVALIDATED_TAGS, randomUUID()))
        .catch((error: Error) => {
          onError(error);
          throw error;
        });
      // Its own invalidation, read back, is no news to this instance; nor is the fold it made of the record.
      if (typeof folded === 'string') {
        seen = { [ALL]: folded };
        // The fold dropped the name: no loss.
        epoch = undefined;
        if (note(ALL, Math.min(Number(folded), now))) onChange();
      } else if (seen) seen[tag] = String(now);
    },
    since(path) {
      if (at.size === 0) return 0;
      let latest = at.get(ALL) ?? 0;
      for (const tag of tagsOf(path)) latest = Math.max(latest, at.get(tag) ?? 0);
      return latest;
    },
    close() {
      clearInterval(timer);
      shared?.redis.off('ready', connected);
    },
  };
}
