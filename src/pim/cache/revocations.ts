import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { byteBounds, createBoundedKeys } from '../../redis-bounded.ts';
import type { SharedRedis } from './shared-redis.ts';

/**
 * The 401s the PIM gave each credential partition: what ends the copies a partition kept before. The same records, in
 * a family of their own, keep the PIM's 403, 404 and 410 of each URL and partition, named by the copy's store key.
 */
export interface Revocations {
  /**
   * `partition` keeps a copy of an answer here, usable until `lastUse` (epoch ms): its 401s are remembered apart from
   * the flood's, and told to the fleet as long as the copy lives.
   */
  kept(partition: string, lastUse: number): void;
  /**
   * The PIM refused `partition` (a 401) just now; `holds`: copies of it are held here (so it is a real key). `at`: the
   * time up to which the verdict ends copies, when earlier than now (a verdict on a call sent before an invalidation
   * ends the copies read before that invalidation only). A record only moves later.
   */
  refused(partition: string, holds: boolean, at?: number): void;
  /** Epoch ms of the latest 401 to `partition` heard here; 0 when none. Synchronous: the check of every call. */
  since(partition: string): number;
  /**
   * Epoch ms of the fleet's latest 401 to `partition` (with a margin for the clock of the instance that heard it), as
   * recorded in Redis; 0 without Redis, or with Redis away or slow. The check, with `since`, before a copy stands in
   * for a failed call.
   */
  inFleet(partition: string): Promise<number>;
}

export interface RevocationsOptions {
  /** Shared with the other instances; absent, each instance knows its own 401s only. */
  shared: SharedRedis | undefined;
  /** How long the fleet's record of a 401 lasts at least (longer when a copy kept before it lives longer). */
  recordMs: number;
  /** Bound on the `keeper:` marks in Redis, in bytes as the copies' bound counts them. */
  redisMaxBytes: number;
  /** How far another instance's clock may be behind this one's when its record is read. */
  clockMarginMs: number;
  onError: (error: Error) => void;
  /**
   * A family of records other than the 401s: `record` names it in Redis, and `markOf(name)` is the key whose life says
   * copies of `name` are kept in the fleet (the copy itself), so `kept` writes no mark of its own. Default: a
   * partition's 401s (`revoked:`), marked by the `keeper:` marks `kept` writes.
   */
  family?: { record: string; markOf: (name: string) => string } | undefined;
}

// Credentials whose 401 is remembered here, in each list: some 100 bytes each. A URL's name (the verdicts' family) may
// be far longer than a partition's: each list holds at most so many bytes of names too, two a character.
const MAX_REMEMBERED = 10_000;
const MAX_REMEMBERED_BYTES = 2 * 1024 * 1024;
const remembered = <V extends {}>(ttl?: number) =>
  new LRUCache<string, V>({
    max: MAX_REMEMBERED,
    maxSize: MAX_REMEMBERED_BYTES,
    sizeCalculation: (_value, name) => 2 * name.length + 64,
    ...(ttl !== undefined && { ttl }),
  });
// How long an instance takes the fleet's answer for one partition as read: an outage served stale asks Redis once a
// second per credential, not once a request.
const FLEET_READ_MS = 1_000;
// How often an instance writes again the mark of a partition it keeps copies of: Redis may have lost it (restarted
// empty, failed over, or pushed it out of its bound).
const MARK_AGAIN_MS = 600_000;

// A 401 is recorded here only for a partition that keeps copies somewhere in the fleet (`keeper:` says so, or the
// caller knows). A record only moves later, and lasts as long as the mark (the copies). Answers 0 when it wrote nothing
// for want of a mark (the caller then records it in the bounded family of those heard with no mark).
const revokeScript = `
local left = redis.call('PTTL', KEYS[1])
if ARGV[3] ~= '1' and left <= 0 then return 0 end
local was = tonumber(redis.call('GET', KEYS[2]))
if not was or was < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', math.max(tonumber(ARGV[2]), left))
end
return 1
`;
type Scripted = Redis & { recordRevocation(...args: Array<string | number>): Promise<unknown> };

/** What the marks may hold in Redis, for copies bounded at `redisMaxBytes` there. */
export const marksMaxBytes = (redisMaxBytes: number) => Math.max(65_536, Math.floor(redisMaxBytes / 4));
/** What one family's records heard with no mark in Redis may hold there, for copies bounded at `redisMaxBytes`. */
export const unmarkedMaxBytes = (redisMaxBytes: number) => Math.max(65_536, Math.floor(redisMaxBytes / 16));

/**
 * The 401s heard here, in two bounded lists (partitions that kept copies here apart from all others, so that a flood of
 * made-up keys' 401s, which keep none, never pushes a real key's out), and, with Redis, the fleet's record of them: an
 * instance that never heard a key's 401 still serves that key none of its older copies at the next outage.
 */
export function createRevocations(options: RevocationsOptions): Revocations {
  const { shared, recordMs, redisMaxBytes, clockMarginMs, onError, family } = options;
  const fail = (error: unknown) => void onError(error instanceof Error ? error : new Error(String(error)));
  // The `keeper:` mark of a partition that kept a copy here, as last written to Redis: when, and until when.
  const marked = remembered<{ at: number; until: number }>();
  // Bounded like the copies (a mark is written only with a copy, and weighs less), shared by every replica: one real
  // key sent with a new Authorization each request makes a partition of each, and a mark of each.
  const marks = shared && !family ? createBoundedKeys(shared.redis, 'keeper') : undefined;
  const markOf = family?.markOf ?? ((name: string) => marks!.key(name));
  const recordOf = (name: string) => `${family?.record ?? 'revoked'}:${name}`;
  const markBounds = byteBounds(marksMaxBytes(redisMaxBytes));
  // A verdict with no mark in Redis: the mark may be gone first (a URL's copy pushed out by the copies' bound; either
  // lost with Redis restarted empty or flushed, which the instance that wrote it does not notice) while another
  // instance holds copies in memory. Recorded all the same, in a family bounded like the marks, at a sixteenth of the
  // copies: a flood of made-up keys' 401s or URLs' 404s pushes out only these, never a record written with a mark.
  const unmarked = shared ? createBoundedKeys(shared.redis, `${family?.record ?? 'revoked'}-unmarked`) : undefined;
  const unmarkedBounds = byteBounds(unmarkedMaxBytes(redisMaxBytes));
  const revoked = remembered<number>();
  const revokedElse = remembered<number>();
  // Those that kept a copy here: a 401 heard on a call that held none (the same key, another Authorization beside it)
  // is a keeper's all the same, and goes with the keepers'.
  const keepers = remembered<true>();
  const fleetReads = remembered<Promise<number>>(FLEET_READ_MS);
  // When a read of the record last failed: for a second no other name of a family (a URL) waits on Redis (each URL's
  // first failed call would wait REDIS_TIMEOUT_MS on a silent Redis, until the connection's breaker opens). Not the
  // 401s: a key's read is held a second already, and one slow reply let every revoked key's copies stand in for that
  // second, Redis answering and holding their records.
  let failedAt = -Infinity;
  const redis = shared?.redis as Scripted | undefined;
  redis?.defineCommand('recordRevocation', { numberOfKeys: 2, lua: revokeScript });
  const since = (partition: string) =>
    revoked.size + revokedElse.size === 0 ? 0 : Math.max(revoked.get(partition) ?? 0, revokedElse.get(partition) ?? 0);
  return {
    kept(partition, lastUse) {
      const now = Date.now();
      keepers.set(partition, true);
      const mark = marked.get(partition);
      // Past the longest-lived copy kept here, by half a record's time, so that not every copy (each lives a little
      // longer than the last) writes it again; written again now and then too, and with the next copy when lost.
      const until = Math.max(Math.max(now + recordMs, lastUse) + recordMs / 2, mark?.until ?? 0);
      if (marks && (!mark || mark.until < lastUse || now - mark.at > MARK_AGAIN_MS)) {
        marked.set(partition, { at: now, until });
        void shared!
          .within(() => marks.store(partition, '1', until - now, markBounds))
          .catch((error: unknown) => (marked.delete(partition), fail(error)));
      }
      // A 401 it had before (a call sent before it, answered after) is kept with the keepers'.
      const at = revokedElse.size === 0 ? undefined : revokedElse.get(partition);
      if (at !== undefined) (revokedElse.delete(partition), revoked.set(partition, at));
    },
    refused(partition, holds, at) {
      const now = at === undefined ? Date.now() : Math.min(Math.round(at), Date.now());
      const keeps = holds || keepers.has(partition);
      const list = keeps ? revoked : revokedElse;
      list.set(partition, Math.max(now, list.get(partition) ?? 0));
      fleetReads.delete(partition);
      if (redis) {
        // At least as long as this instance's own mark says its copies live (Redis may have lost the mark).
        const lasts = Math.max(recordMs, (marked.get(partition)?.until ?? 0) - now);
        const args = [markOf(partition), recordOf(partition), now, Math.round(lasts), keeps ? 1 : 0] as const;
        // Two bounded steps: a reply that comes after its bound sends nothing more.
        void shared!
          .within(() => redis.recordRevocation(...args))
          .then((recorded) =>
            // Not a verdict on a call sent before an invalidation: read with the margins of two clocks (the record's
            // and the copy's), it would end a copy another instance read right after that invalidation.
            recorded === 0 && unmarked && at === undefined
              ? shared!.within(() => unmarked.store(partition, String(now), lasts, unmarkedBounds, true))
              : undefined,
          )
          .catch(fail);
      }
    },
    since,
    async inFleet(partition) {
      if (!redis) return 0;
      let read = fleetReads.get(partition);
      if (!read) {
        if (family && Date.now() - failedAt < FLEET_READ_MS) return 0;
        const names = unmarked ? [recordOf(partition), unmarked.key(partition)] : [recordOf(partition)];
        const reading = shared!
          .within(() => redis.mget(...names))
          .then(
            // This instance's own record is read without the margin another's clock needs: a copy it read after the
            // verdict it heard stands in.
            (values) => {
              const value = Math.max(0, ...values.map((value) => Number(value) || 0));
              return value === 0 ? 0 : value + (value === since(partition) ? 0 : clockMarginMs);
            },
            (error: unknown) => ((failedAt = Date.now()), fail(error), 0),
          );
        read = reading;
        // Held while it waits (a silent Redis, up to REDIS_TIMEOUT_MS), then for its second from the reply.
        fleetReads.set(partition, reading, { ttl: 0 });
        void reading.then(() => fleetReads.peek(partition) === reading && fleetReads.set(partition, reading));
      }
      return read;
    },
  };
}
