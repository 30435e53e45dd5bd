import { ReplyError, type Redis } from 'ioredis';
import { closeRedis, createRedis, replyWithin } from '../../redis.ts';
import type { ByteAccount } from '../rest/byte-limits.ts';
import { createInvalidations } from '../cache/invalidations.ts';
import { createLastKnownGood } from '../cache/last-known-good.ts';
import { createRevocations } from '../cache/revocations.ts';
import type { SharedRedis } from '../cache/shared-redis.ts';
import { CLOCK_MARGIN_MS, createStaleLayer, type CacheOutcome } from './stale.ts';
import type { Layer } from '../rest/types.ts';

export interface StaleServingOptions {
  /** Milliseconds after it was produced that a 2xx answer may stand in for a failed call; 0 turns it off. */
  staleIfErrorMs: number;
  /** Milliseconds past its freshness an answer without `stale-while-revalidate` is served while it is refreshed. */
  staleWhileRevalidateMs: number;
  /** Bound on the in-process last-known-good copies. */
  maxBytes: number;
  /** Bound on the copies in Redis (bytes Redis holds for them), shared by every instance using it. */
  redisMaxBytes: number;
  /** With a `redis://` URL, copies and invalidations are shared by every instance using it. */
  redisUrl: string | undefined;
  /** Longest wait for a Redis reply: a slower read is a miss, a slower write is given up. */
  redisTimeoutMs: number;
  /** How often an instance reads the fleet's invalidations from Redis. */
  invalidationPollMs: number;
  /** Told about each Redis failure; a failed read is a miss, a failed write is skipped. */
  onError: (error: Error) => void;
  onOutcome?: ((outcome: CacheOutcome, reason?: string) => void) | undefined;
  requestTimeoutMs: number;
  /** The HTTP cache's lifetime of answers that name none. */
  defaultTtlMs: number;
  openBytes: (credential: string) => ByteAccount;
  /** Told when an invalidation, here or on another instance, ends the freshness of some answers. */
  onInvalidation?: (() => void) | undefined;
}

const DAY_MS = 86_400_000;

// Redis left unanswered this long ago or less: not answering (see SharedRedis' `answering`).
const UNANSWERED_MS = 1_000;

/** The connection's bound, and whether a command failed lately for want of a reply (a reply's error is an answer). */
function answeringWithin(redis: Redis, timeoutMs: number): SharedRedis {
  const bound = replyWithin(timeoutMs);
  let unansweredAt = -Infinity;
  return {
    redis,
    within: (command) =>
      bound(command).catch((error: unknown) => {
        if (!(error instanceof (ReplyError as typeof Error))) unansweredAt = Date.now();
        throw error;
      }),
    answering: () => Date.now() - unansweredAt >= UNANSWERED_MS,
  };
}

/**
 * Wires the stale step of the client: the last-known-good store, the invalidation record, and
 * their shared Redis connection when REDIS_URL is set.
 */
export function createStaleServing(options: StaleServingOptions) {
  const report = options.onError;
  const redis = options.redisUrl ? createRedis(options.redisUrl, report, options.redisTimeoutMs) : undefined;
  // One bound for the connection: after a few failures in a row, both stores leave Redis alone a while.
  const shared = redis && answeringWithin(redis, options.redisTimeoutMs);
  const { maxBytes, redisMaxBytes } = options;
  const store = createLastKnownGood({ maxBytes, redisMaxBytes, shared, onError: report });
  // A 401's record lasts as long as the settings let a copy kept before it stand in (a day at least: an answer's own
  // stale-if-error may say more than the settings).
  const recordMs = Math.max(options.staleIfErrorMs, options.staleWhileRevalidateMs, DAY_MS);
  const revocations = createRevocations({
    shared,
    recordMs,
    redisMaxBytes,
    clockMarginMs: CLOCK_MARGIN_MS,
    onError: report,
  });
  // The PIM's 403, 404 and 410 of a URL and key, heard by any instance: the copies others hold in memory end with them.
  // Recorded while the URL's copy lives in Redis (or this instance holds one), as long as it may stand in.
  const verdicts = createRevocations({
    shared,
    recordMs,
    redisMaxBytes,
    clockMarginMs: CLOCK_MARGIN_MS,
    onError: report,
    family: { record: 'ended', markOf: store.sharedName },
  });
  const invalidations = createInvalidations({
    shared,
    pollMs: options.invalidationPollMs,
    onChange: () => options.onInvalidation?.(),
    onError: report,
  });
  const layer: Layer = createStaleLayer({
    store,
    revocations,
    verdicts,
    staleIfErrorMs: options.staleIfErrorMs,
    staleWhileRevalidateMs: options.staleWhileRevalidateMs,
    defaultTtlMs: options.defaultTtlMs,
    invalidatedSince: invalidations.since,
    // The queue wait and the call itself, as a request's budget would allow.
    refreshBudgetMs: options.requestTimeoutMs * 2,
    openBytes: options.openBytes,
    onOutcome: options.onOutcome,
  });
  return {
    layer,
    onOutcome: options.onOutcome,
    invalidatedSince: invalidations.since,
    heldBytes: store.bytes,
    invalidate: invalidations.invalidate,
    close: async () => {
      invalidations.close();
      if (redis) await closeRedis(redis);
    },
  };
}
