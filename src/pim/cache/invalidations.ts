import type { SharedRedis } from './shared-redis.ts';
import { tagsOf } from './tags.ts';

/** The tag that matches every answer. */
export const ALL = 'all';

// One hash for the fleet: field = tag, value = epoch ms of its latest invalidation.
const HASH = 'invalidated';

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
    if ((at.get(tag) ?? 0) >= ms) return false;
    at.set(tag, ms);
    return true;
  };
  const poll = async () => {
    const record = await shared!.within(() => shared!.redis.hgetall(HASH)).catch((error: Error) => void onError(error));
    let changed = false;
    for (const [tag, ms] of Object.entries(record ?? {})) changed = note(tag, Number(ms)) || changed;
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
      if (shared) await shared.within(() => shared.redis.hset(HASH, tag, String(now)));
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
