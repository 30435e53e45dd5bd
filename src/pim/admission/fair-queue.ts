import { pimError } from '../rest/errors.ts';

export interface FairQueueOptions {
  /** Slots in all (upstream connections). */
  maxConcurrency: number;
  /** Slots one partition may hold at once, so other partitions always find one free. */
  maxPerKey: number;
}

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
  grant(): void;
}

interface Share {
  active: number;
  waiters: Waiter[];
}

interface Partition {
  active: number;
  waiting: number;
  // Insertion order is the turn order: a share served goes to the back.
  shares: Map<string, Share>;
}

/**
 * A queue for the upstream connections, fair on two levels: each partition (a credential) holds
 * at most `maxPerKey` slots, and a freed slot goes to the partition, then to the share inside it,
 * with the fewest calls in flight (ties in turn). So a caller with nothing in flight is next,
 * whatever burst another caller of the same credential has queued.
 */
export function createFairQueue({ maxConcurrency, maxPerKey }: FairQueueOptions) {
  let active = 0;
  // Insertion order is the turn order: a partition served goes to the back.
  const partitions = new Map<string, Partition>();

  const open = ({ partition, share }: QueueKey) => {
    let p = partitions.get(partition);
    if (!p) partitions.set(partition, (p = { active: 0, waiting: 0, shares: new Map() }));
    let s = p.shares.get(share);
    if (!s) p.shares.set(share, (s = { active: 0, waiters: [] }));
    return { p, s };
  };
  const forget = ({ partition, share }: QueueKey, p: Partition, s: Share) => {
    if (s.active === 0 && s.waiters.length === 0) p.shares.delete(share);
    if (p.shares.size === 0) partitions.delete(partition);
  };
  const take = (key: QueueKey, p: Partition, s: Share): Release => {
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
      forget(key, p, s);
      next();
    };
  };
  const next = () => {
    while (active < maxConcurrency) {
      const p = fewest(partitions, (c) => c.waiting > 0 && c.active < maxPerKey);
      if (!p) return;
      const s = fewest(p.shares, (c) => c.waiters.length > 0)!;
      p.waiting--;
      // The grant takes its slot at once, so the loop sees the count it leaves.
      s.waiters.shift()!.grant();
    }
  };

  /**
   * Waits for a slot for `key`. Rejects with BUDGET_EXCEEDED when `deadline` (epoch ms) passes
   * first, and with the signal's reason when the caller leaves; neither ever held a slot.
   */
  function acquire(key: QueueKey, deadline: number, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const { p, s } = open(key);
    if (active < maxConcurrency && p.active < maxPerKey && p.waiting === 0) return Promise.resolve(take(key, p, s));
    return new Promise<Release>((resolve, reject) => {
      const leave = (reason: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        s.waiters.splice(s.waiters.indexOf(waiter), 1);
        p.waiting--;
        forget(key, p, s);
        reject(reason);
      };
      const onAbort = () => leave(signal!.reason);
      const timer = setTimeout(
        () => leave(pimError('BUDGET_EXCEEDED', new Error('the request budget ran out while queued'))),
        Math.max(0, deadline - Date.now()),
      );
      const waiter: Waiter = {
        grant() {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(take(key, p, s));
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      s.waiters.push(waiter);
      p.waiting++;
    });
  }

  return { acquire };
}

export type FairQueue = ReturnType<typeof createFairQueue>;

/** The eligible entry with the fewest calls in flight, the earliest in turn among equals; it goes to the back. */
function fewest<T extends { active: number }>(entries: Map<string, T>, eligible: (entry: T) => boolean) {
  let best: [string, T] | undefined;
  for (const entry of entries) if (eligible(entry[1]) && (!best || entry[1].active < best[1].active)) best = entry;
  if (!best) return undefined;
  entries.delete(best[0]);
  entries.set(best[0], best[1]);
  return best[1];
}
