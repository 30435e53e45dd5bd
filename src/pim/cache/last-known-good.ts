import { LRUCache } from 'lru-cache';
import { byteBounds, createBoundedKeys } from '../../redis-bounded.ts';
import { isEnvelopeText } from '../rest/answer.ts';
import type { SharedRedis } from './shared-redis.ts';

/** A 2xx answer kept to be served once stale: its JSON text and the times that bound its use. */
export interface KeptAnswer {
  text: string;
  /** Epoch ms the upstream produced it (its `Age` taken off). */
  storedAt: number;
  /** Epoch ms its freshness ends. */
  freshUntil: number;
  /** Epoch ms up to which it may be served while one refresh runs; at most `freshUntil` when never. */
  revalidateUntil: number;
  /** Epoch ms up to which it may stand in for a failed call. */
  errorUntil: number;
  /**
   * Epoch ms its call was sent (by the instance that kept it), or it was produced if earlier (an HTTP cache's replay):
   * a 401 heard after it ends it. Absent in copies an older version wrote.
   */
  sentAt?: number;
  /** Read from Redis: its times are the clock of the instance that kept it, which may be ahead of this one's. */
  shared?: true;
}

export interface LastKnownGoodOptions {
  /** Bound on the in-process copy, in bytes of heap as {@link weight} counts them. */
  maxBytes: number;
  /** Bound on the copies in Redis, in bytes Redis holds for them (value, name, index); those soonest to expire go first. */
  redisMaxBytes: number;
  /** Shared with the other instances, each entry expiring with its use; absent, memory only. */
  shared: SharedRedis | undefined;
  onError: (error: Error) => void;
}

/** The key of a partition's copy of a path's answer: `<partition> <path>` (a partition is a digest, no space in it). */
export const keyOf = (partition: string, path: string) => `${partition} ${path}`;
const partitionOf = (key: string) => key.slice(0, Math.max(0, key.indexOf(' ')));

/**
 * The last good answer of every URL per credential (`key` holds both, {@link keyOf}): in memory, least recently
 * used out past the byte bound, and in Redis when given, so any instance can serve what one saw.
 */
export interface LastKnownGood {
  /**
   * Keeps `entry` until the last moment it may be used; with `unlessAfter` (an answer to a call sent before that
   * invalidation), not over a copy in Redis produced after it (another instance's, read after the invalidation).
   */
  keep(key: string, entry: KeptAnswer, unlessAfter?: number): void;
  /** The in-process entry, without touching Redis: the check on every call. */
  peek(key: string): KeptAnswer | undefined;
  /**
   * The in-process entry, else Redis's: the check after a failed call. `past`: the entry held here may not stand in (a
   * verdict heard since ended it), and Redis's is looked for all the same.
   */
  find(key: string, past?: KeptAnswer): Promise<KeptAnswer | undefined>;
  /**
   * Drops the entry here and in Redis: the PIM has answered that URL and credential with a verdict, or (`byAnswer`)
   * with a newer answer that may not be kept; with `unlessAfter`, not a copy in Redis produced after that time.
   */
  forget(key: string, byAnswer?: boolean, unlessAfter?: number): void;
  /** Bytes the in-process copies weigh now, as the bound counts them. */
  bytes(): number;
  /** Whether copies of `partition` are held here: a key that kept some is a real one (a made-up key keeps none). */
  holds(partition: string): boolean;
  /** Copies are kept in Redis too: {@link find} may find one this instance never kept. */
  shared: boolean;
  /** The Redis key of `key`'s copy there: while it lives, some instance may hold the copy in memory too. */
  sharedName(key: string): string;
}

// Two bytes a character: one past Latin-1 (a €, a typographic quote) makes V8 keep the whole string so. Measured,
// the entry's object, its times and the LRU's bookkeeping take some 250 bytes more, and a credential's share's
// (below) some 300 when each credential holds one copy (a token per user).
const weight = (entry: KeptAnswer, key: string) => 2 * (entry.text.length + key.length) + 512;

/** Creates the {@link LastKnownGood} store. */
export function createLastKnownGood({ maxBytes, redisMaxBytes, shared, onError }: LastKnownGoodOptions): LastKnownGood {
  const fail = (error: unknown) => void onError(error instanceof Error ? error : new Error(String(error)));
  // The copies each partition holds (their weights, oldest kept first) and what they weigh together: a partition is
  // here while it has one. One credential may hold three quarters of the bound, one copy a quarter, as the HTTP cache
  // keeps its entries: a caller reading a few big pages (or many) pushes out its own oldest copies, never every other
  // credential's, whose last good answers the next outage needs.
  const held = new Map<string, { copies: Map<string, number>; bytes: number }>();
  const shareBytes = Math.floor((maxBytes * 3) / 4);
  const account = (key: string, weighs: number) => {
    const partition = partitionOf(key);
    const mine = held.get(partition) ?? { copies: new Map<string, number>(), bytes: 0 };
    mine.bytes += weighs - (mine.copies.get(key) ?? 0);
    mine.copies.delete(key);
    if (weighs > 0) mine.copies.set(key, weighs);
    if (mine.copies.size > 0) held.set(partition, mine);
    else held.delete(partition);
  };
  const memory = new LRUCache<string, KeptAnswer>({
    maxSize: maxBytes,
    sizeCalculation: weight,
    onInsert: (entry, key) => account(key, weight(entry, key)),
    // `set`: replaced by a newer copy, which onInsert weighs anew.
    dispose: (_entry, key, reason) => void (reason !== 'set' && account(key, 0)),
  });
  // Makes room for a copy of `key` weighing `weighs` within its partition's share: its oldest copies go first.
  const withinShare = (key: string, weighs: number) => {
    const mine = held.get(partitionOf(key));
    if (!mine) return;
    for (const [oldest] of mine.copies) {
      if (mine.bytes - (mine.copies.get(key) ?? 0) + weighs <= shareBytes) return;
      if (oldest !== key) memory.delete(oldest);
      else if (mine.copies.size === 1) return;
    }
  };
  const copies = shared && createBoundedKeys(shared.redis, 'lkg');
  // Keys whose copy the PIM ended (401, 403, 404, 410) while Redis could not take the delete (demoted, away, silent):
  // when it was ended. A copy in Redis produced no later is that ended copy, which must not come back at the next
  // outage. Bounded like the copies (the key, two bytes a character, and its bookkeeping).
  const marks = () =>
    new LRUCache<string, number>({
      maxSize: Math.max(65_536, Math.floor(maxBytes / 16)),
      sizeCalculation: (_at, key) => 2 * key.length + 128,
    });
  const ended = marks();
  // Keys whose newer answer Redis refused to store: the older copy it may still hold is ended up to that answer. Apart
  // from the verdicts', so that the answers kept while Redis refuses writes (every one) never push a verdict's out.
  const superseded = marks();
  // A mark only moves later: an earlier time would let back a copy a later verdict or answer ended.
  const markUpTo = (marked: typeof ended, key: string, at: number) =>
    void marked.set(key, Math.max(at, marked.get(key) ?? -Infinity));
  const endedAt = (key: string) => Math.max(ended.get(key) ?? -Infinity, superseded.get(key) ?? -Infinity);
  // A newer answer's end is marked with the answers' (every one while Redis refuses writes), never among the verdicts'.
  // `upTo`: the invalidation an answer to a call sent before it ends the copies up to (not one read after it).
  const forgetShared = (key: string, marked = ended, upTo = Infinity) =>
    shared!
      .within(() => copies!.forget(key))
      .catch((error: unknown) => {
        // The latest verdict: a copy kept after an earlier one (Redis took that store) is ended by this one.
        markUpTo(marked, key, Math.min(Date.now(), upTo));
        fail(error);
      });
  // Bytes alone bound them: a small answer (a page past the last) weighs mostly its name.
  const redisBounds = byteBounds(redisMaxBytes);
  const lastUse = (entry: KeptAnswer) => Math.max(entry.errorUntil, entry.revalidateUntil);
  const remember = (key: string, entry: KeptAnswer) => {
    const ttl = lastUse(entry) - Date.now();
    const weighs = weight(entry, key);
    // Bigger than a quarter of the bound: not kept. The older copy it replaces goes all the same: it must not stand in
    // for the newer answer.
    if (ttl <= 0 || weighs > maxBytes / 4) return void memory.delete(key);
    withinShare(key, weighs);
    memory.set(key, entry, { ttl });
  };
  // Whether Redis holds a copy produced after `at` (read after an invalidation at `at`, by another instance): an answer
  // to a call sent before it must neither replace nor end that copy. Unreadable: taken as one, which stays. Undefined
  // when Redis did not tell in time (its GET timed out or failed): nothing is sent then (a write sent after such a GET
  // reached Redis once it answered again, and put the older answer over the newer one).
  const sharedAfter = async (key: string, at: number | undefined) => {
    if (at === undefined || !shared || !copies) return false;
    const { redis, within } = shared;
    const stored = await within(() => redis.get(copies.key(key))).catch((error: unknown) => (fail(error), undefined));
    if (stored === undefined) return undefined;
    if (stored === null) return false;
    const times = parseTimes(stored);
    return times === undefined || times.storedAt > at;
  };
  // Keys whose write waits on that GET: the ticket of the latest. A keep or forget that comes meanwhile is the outcome
  // of a later call (or of one sent after the invalidation): the waiting write is dropped, not sent after it (which
  // would put the older answer back over the newer in Redis, or delete the newer copy).
  const waiting = new Map<string, number>();
  let tickets = 0;
  // `unsure`: what to do in place of the write when Redis did not tell (it then holds whatever it held).
  const inOrder = (key: string, unlessAfter: number | undefined, write: () => unknown, unsure: () => void) => {
    if (unlessAfter === undefined) return void (waiting.delete(key), write());
    const ticket = ++tickets;
    waiting.set(key, ticket);
    void sharedAfter(key, unlessAfter).then((newer) => {
      if (waiting.get(key) !== ticket) return;
      waiting.delete(key);
      if (newer === undefined) unsure();
      else if (!newer) write();
    });
  };
  return {
    keep(key, entry, unlessAfter) {
      remember(key, entry);
      const ttl = lastUse(entry) - Date.now();
      if (!shared || !copies || ttl <= 0) return;
      const { text, ...times } = entry;
      const stored = `${JSON.stringify(times)}\n${text}`;
      // Redis keeps whatever older copy it had, which must not stand in for this newer answer (gone from memory when too
      // big for it, or once evicted).
      const supersede = () => markUpTo(superseded, key, entry.storedAt - 1);
      const store = () =>
        shared
          .within(() => copies.store(key, stored, ttl, redisBounds))
          .then(
            // Redis holds this copy now (or none, too big for its bound), whatever its storedAt (an estimate from the
            // PIM's Age): no earlier mark is about it.
            () => (ended.delete(key), superseded.delete(key)),
            (error: unknown) => (supersede(), fail(error)),
          );
      // Sent at once when nothing is to be checked first: in order with the forgets and keeps around it.
      // Not sent: the older copy Redis may hold is ended up to this answer, as when Redis refuses the store.
      inOrder(key, unlessAfter, store, supersede);
    },
    peek: (key) => memory.get(key),
    forget(key, byAnswer = false, unlessAfter) {
      memory.delete(key);
      if (!shared || !copies) return;
      const marked = byAnswer ? superseded : ended;
      // Not sent: the copies Redis may hold from before the invalidation are ended here, not a newer one.
      inOrder(
        key,
        unlessAfter,
        () => forgetShared(key, marked, unlessAfter),
        () => markUpTo(marked, key, unlessAfter!),
      );
    },
    bytes: () => memory.calculatedSize,
    holds: (partition) => held.has(partition),
    shared: copies !== undefined,
    sharedName: (key) => copies?.key(key) ?? key,
    async find(key, past) {
      const held = memory.get(key);
      // Kept here past its stale-if-error window (for its freshness or its stale-while-revalidate), it stands in for
      // nothing: a newer copy another instance kept in Redis may.
      if ((held && held !== past && Date.now() <= held.errorUntil) || !shared || !copies) return held;
      // A second look past the ended copy, after the fleet's records were read: not on a Redis that just left a command
      // unanswered (a request waits on a silent Redis at most twice, the HTTP cache's lookup and the records).
      if (past && held === past && shared.answering?.() === false) return held;
      const { redis, within } = shared;
      const stored = await within(() => redis.get(copies.key(key))).catch(fail);
      const entry = stored ? parse(stored) : undefined;
      // The copy the PIM ended, or one a newer answer replaced, still in Redis: none. Its delete is sent again.
      if (entry && entry.storedAt <= endedAt(key))
        return void forgetShared(key, (ended.get(key) ?? -Infinity) >= entry.storedAt ? ended : superseded);
      if (!entry || (held && held.storedAt >= entry.storedAt)) return held;
      remember(key, entry);
      return entry;
    },
  };
}

const TIMES = ['storedAt', 'freshUntil', 'revalidateUntil', 'errorUntil'] as const;

// A copy's times, the line before its text; undefined when unreadable.
function parseTimes(stored: string): Omit<KeptAnswer, 'text'> | undefined {
  const newline = stored.indexOf('\n');
  try {
    const times = JSON.parse(stored.slice(0, newline)) as Record<(typeof TIMES)[number] | 'sentAt', unknown> | null;
    if (newline < 0 || !TIMES.every((name) => Number.isFinite(times?.[name]))) return undefined;
    if (times!.sentAt !== undefined && !Number.isFinite(times!.sentAt)) return undefined;
    return times as Omit<KeptAnswer, 'text'>;
  } catch {
    return undefined;
  }
}

// A copy this version cannot read (cut short, or written in another shape) is no copy: served, it would fail its
// field with an unexpected error in place of the outage's own. Read only when a call has failed.
function parse(stored: string): KeptAnswer | undefined {
  const times = parseTimes(stored);
  const text = stored.slice(stored.indexOf('\n') + 1);
  if (times === undefined || !isEnvelopeText(text)) return undefined;
  return { ...times, text, shared: true };
}
