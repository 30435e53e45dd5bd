import { pimError, shuttingDown } from '../rest/errors.ts';
import type { JoinedShares } from '../rest/types.ts';

export interface FairQueueOptions {
  /** Slots in all (upstream connections). */
  maxConcurrency: number;
  /** Slots one partition may hold at once, so other partitions always find one free. */
  maxPerKey: number;
  /** Partitions served before any other when a slot frees (the probes: one call each at a time). */
  first?: readonly string[];
}

// The failures of calls whose budget ran out before any slot freed: they never reached the upstream.
const neverSent = new WeakSet<Error>();
const queuedOut = () => {
  const error = pimError('BUDGET_EXCEEDED', new Error('the request budget ran out while queued'));
  neverSent.add(error);
  return error;
};

// The failures of calls still waiting when the server's shutdown grace is about to end: their budget ends with it.
const shutDown = () => {
  const error = shuttingDown();
  neverSent.add(error);
  return error;
};

/** True for a call that waited its whole budget in the queue: every slot was held meanwhile, the upstream never asked. */
export const isQueuedOut = (error: unknown): boolean => error instanceof Error && neverSent.has(error);

/** Where a call waits: the partition of the credential it uses, and its share inside that partition. */
export interface QueueKey {
  /** The credential the upstream authenticates; each holds at most `maxPerKey` slots. */
  partition: string;
  /** Who the partition's slots are shared fairly between: a GraphQL request, or a client address. */
  share: string;
}

/** Gives back a slot; calling it twice is harmless. */
export type Release = () => void;

interface Waiter {
  /** Every share the call waits in: its own, then those of requests that joined it (coalescing). */
  shares: Share[];
  grant(share: Share): void;
}

interface Share {
  name: string;
  active: number;
  waiters: Waiter[];
}

interface Partition {
  name: string;
  active: number;
  /** Calls waiting, each counted once however many shares it waits in. */
  waiting: number;
  // Insertion order is the turn order: a share served goes to the back.
  shares: Map<string, Share>;
}

/**
 * A queue for the upstream connections, fair on two levels: each partition (a credential) holds
 * at most `maxPerKey` slots, and a freed slot goes to the partition, then to the share inside it,
 * with the fewest calls in flight (ties in turn). So a caller with nothing in flight is next,
 * whatever burst another caller of the same credential has queued. A call several requests wait on
 * waits in each of their shares and is served in whichever comes first.
 */
export function createFairQueue({ maxConcurrency, maxPerKey, first = [] }: FairQueueOptions) {
  let active = 0;
  // Insertion order is the turn order: a partition served goes to the back.
  const partitions = new Map<string, Partition>();
  // How each waiting call leaves the queue unserved; once closed, a call that would wait is refused at once.
  const leaving = new Set<(reason: unknown) => void>();
  let closed = false;

  const partitionOf = (name: string) => {
    let p = partitions.get(name);
    if (!p) partitions.set(name, (p = { name, active: 0, waiting: 0, shares: new Map() }));
    return p;
  };
  const shareOf = (p: Partition, name: string) => {
    let s = p.shares.get(name);
    if (!s) p.shares.set(name, (s = { name, active: 0, waiters: [] }));
    return s;
  };
  const forget = (p: Partition, s: Share) => {
    if (s.active === 0 && s.waiters.length === 0) p.shares.delete(s.name);
    if (p.shares.size === 0) partitions.delete(p.name);
  };
  // Takes a waiter out of every share it waits in; `kept`, the share about to be served, stays open.
  const unqueue = (p: Partition, waiter: Waiter, kept?: Share) => {
    p.waiting--;
    for (const s of waiter.shares) {
      s.waiters.splice(s.waiters.indexOf(waiter), 1);
      if (s !== kept) forget(p, s);
    }
  };
  const take = (p: Partition, s: Share): Release => {
    active++;
    p.active++;
    s.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active--;
      p.active--;
      s.active--;
      forget(p, s);
      next();
    };
  };
  const eligible = (c: Partition) => c.waiting > 0 && c.active < maxPerKey;
  // A loop, not map/find: this runs for every slot that frees.
  const firstWaiting = () => {
    for (const name of first) {
      const p = partitions.get(name);
      if (p && eligible(p)) return p;
    }
    return undefined;
  };
  const next = () => {
    while (active < maxConcurrency) {
      const p = firstWaiting() ?? fewest(partitions, eligible);
      if (!p) return;
      const s = fewest(p.shares, (c) => c.waiters.length > 0)!;
      // The grant takes its slot at once, so the loop sees the count it leaves.
      s.waiters[0]!.grant(s);
    }
  };

  /**
   * Waits for a slot for `key`. Rejects with BUDGET_EXCEEDED when `deadline` (epoch ms) passes
   * first, and with the signal's reason when the caller leaves; neither ever held a slot. Each share
   * `joined` names while the call waits becomes one more share it waits in.
   */
  function acquire(key: QueueKey, deadline: number, signal?: AbortSignal, joined?: JoinedShares): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    // Closed, no call goes out: one sent now would be cut with its connection as the grace ends.
    if (closed) return Promise.reject(shutDown());
    const p = partitionOf(key.partition);
    const own = shareOf(p, key.share);
    if (active < maxConcurrency && p.active < maxPerKey && p.waiting === 0) return Promise.resolve(take(p, own));
    return new Promise<Release>((resolve, reject) => {
      let waiting = true;
      const done = (kept?: Share) => {
        waiting = false;
        leaving.delete(leave);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        unqueue(p, waiter, kept);
      };
      const leave = (reason: unknown) => {
        done();
        reject(reason);
      };
      const onAbort = () => leave(signal!.reason);
      const timer = setTimeout(() => leave(queuedOut()), Math.max(0, deadline - Date.now()));
      const waiter: Waiter = {
        shares: [own],
        grant(share) {
          done(share);
          resolve(take(p, share));
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      leaving.add(leave);
      own.waiters.push(waiter);
      p.waiting++;
      joined?.listen(
        (name) => {
          if (!waiting || waiter.shares.some((s) => s.name === name)) return;
          const s = shareOf(p, name);
          s.waiters.push(waiter);
          waiter.shares.push(s);
        },
        // Every request that lent the share is gone: the call waits in it no longer (its own share stays).
        (name) => {
          const at = waiter.shares.findIndex((s, i) => i > 0 && s.name === name);
          if (!waiting || at < 0) return;
          const [s] = waiter.shares.splice(at, 1);
          s!.waiters.splice(s!.waiters.indexOf(waiter), 1);
          forget(p, s!);
        },
      );
    });
  }

  return {
    acquire,
    /** Calls waiting for a slot now. */
    waiting: () => leaving.size,
    /**
     * Fails every call waiting (BUDGET_EXCEEDED, never sent), and from now on every call asking for a slot: the
     * shutdown's grace is ending, and a request answered with that error is better than one cut unanswered.
     */
    close() {
      closed = true;
      for (const leave of [...leaving]) leave(shutDown());
    },
  };
}

export type FairQueue = ReturnType<typeof createFairQueue>;

/** The eligible entry with the fewest calls in flight, the earliest in turn among equals; it goes to the back. */
function fewest<T extends { active: number }>(entries: Map<string, T>, eligible: (entry: T) => boolean) {
  let best: [string, T] | undefined;
  for (const entry of entries) {
    if (!eligible(entry[1]) || (best && entry[1].active >= best[1].active)) continue;
    best = entry;
    // None has fewer than none: the first idle one in turn wins, so a queue of many idle shares is not scanned whole.
    if (entry[1].active === 0) break;
  }
  if (!best) return undefined;
  entries.delete(best[0]);
  entries.set(best[0], best[1]);
  return best[1];
}
