import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { SharedRedis } from './shared-redis.ts';

/** The 401s the PIM gave each credential partition: what ends the copies a partition kept before. */
export interface Revocations {
  /** `partition` keeps a copy of an answer (here): its 401s are remembered apart from the flood's, and told to the fleet. */
  kept(partition: string): void;
  /** The PIM refused `partition` (a 401) just now; `holds`: copies of it are held here (so it is a real key). */
  refused(partition: string, holds: boolean): void;
  /** Epoch ms of the latest 401 to `partition` heard here; 0 when none. Synchronous: the check of every call. */
  since(partition: string): number;
  /**
   * The same, or the fleet's latest when later (with a margin for the clock of the instance that heard it): the check
   * before a copy stands in for a failed call. Redis away or slow: what this instance heard.
   */
  sinceInFleet(partition: string): Promise<number>;
}

export interface RevocationsOptions {
  /** Shared with the other instances; absent, each instance knows its own 401s only. */
  shared: SharedRedis | undefined;
  /** How long the fleet's record of a 401 lasts: as long as any copy kept before it may stand in. */
  recordMs: number;
  /** How far another instance's clock may be behind this one's when its record is read. */
  clockMarginMs: number;
  onError: (error: Error) => void;
}

// Credentials whose 401 is remembered here, in each list: some 100 bytes each.
const MAX_REMEMBERED = 10_000;
// How long an instance takes the fleet's answer for one partition as read: an outage served stale asks Redis once a
// second per credential, not once a request.
const FLEET_READ_MS = 1_000;

// A 401 is recorded only for a partition that keeps copies somewhere in the fleet (`keeper:` says so, or the caller
// knows): a made-up key's 401 writes nothing. A record only moves later.
const revokeScript = `
if ARGV[3] == '1' or redis.call('EXISTS', KEYS[1]) == 1 then
  local was = tonumber(redis.call('GET', KEYS[2]))
  if not was or was < tonumber(ARGV[1]) then redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2]) end
end
`;
type Scripted = Redis & { recordRevocation(...args: Array<string | number>): Promise<unknown> };

/**
 * The 401s heard here, in two bounded lists (partitions that kept copies here apart from all others, so that a flood of
 * made-up keys' 401s, which keep none, never pushes a real key's out), and, with Redis, the fleet's record of them: an
 * instance that never heard a key's 401 still serves that key none of its older copies at the next outage.
 */
export function createRevocations({ shared, recordMs, clockMarginMs, onError }: RevocationsOptions): Revocations {
  const fail = (error: unknown) => void onError(error instanceof Error ? error : new Error(String(error)));
  // When the `keeper:` mark of a partition that kept a copy here was last written to Redis.
  const marked = new LRUCache<string, number>({ max: MAX_REMEMBERED });
  const revoked = new LRUCache<string, number>({ max: MAX_REMEMBERED });
  const revokedElse = new LRUCache<string, number>({ max: MAX_REMEMBERED });
  const fleetReads = new LRUCache<string, Promise<number>>({ max: MAX_REMEMBERED, ttl: FLEET_READ_MS });
  const redis = shared?.redis as Scripted | undefined;
  redis?.defineCommand('recordRevocation', { numberOfKeys: 2, lua: revokeScript });
  const since = (partition: string) =>
    revoked.size + revokedElse.size === 0 ? 0 : Math.max(revoked.get(partition) ?? 0, revokedElse.get(partition) ?? 0);
  const send = (command: () => Promise<unknown>) => void shared!.within(command).catch(fail);
  return {
    kept(partition) {
      const now = Date.now();
      // Written again well before it expires, for a partition kept here all along.
      if (redis && now - (marked.get(partition) ?? -Infinity) > recordMs / 2) {
        send(() => redis.set(`keeper:${partition}`, '1', 'PX', recordMs));
        marked.set(partition, now);
      }
      // A 401 it had before (a call sent before it, answered after) is kept with the keepers'.
      const at = revokedElse.size === 0 ? undefined : revokedElse.get(partition);
      if (at !== undefined) (revokedElse.delete(partition), revoked.set(partition, at));
    },
    refused(partition, holds) {
      const now = Date.now();
      (holds ? revoked : revokedElse).set(partition, now);
      fleetReads.delete(partition);
      if (redis) {
        const args = [`keeper:${partition}`, `revoked:${partition}`, now, recordMs, holds ? 1 : 0] as const;
        send(() => redis.recordRevocation(...args));
      }
    },
    since,
    async sinceInFleet(partition) {
      const here = since(partition);
      if (!redis) return here;
      let read = fleetReads.get(partition);
      if (!read) {
        const reading = shared!
          .within(() => redis.get(`revoked:${partition}`))
          .then(
            (value) => (value === null ? 0 : Number(value) + clockMarginMs || 0),
            (error: unknown) => (fail(error), 0),
          );
        read = reading;
        fleetReads.set(partition, reading);
        // Its second counts from the reply: a silent Redis's wait (REDIS_TIMEOUT_MS) is not taken again at once.
        void reading.then(() => fleetReads.get(partition) === reading && fleetReads.set(partition, reading));
      }
      return Math.max(here, await read);
    },
  };
}
