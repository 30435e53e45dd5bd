import { pimError } from './errors.ts';

export interface FairQueueOptions {
  /** Slots in all (upstream connections). */
  maxConcurrency: number;
  /** Slots one key may hold at once, so other keys always find one free. */
  maxPerKey: number;
}

/** Gives back a slot; calling it twice is harmless. */
export type Release = () => void;

interface Waiter {
  grant(): void;
}

interface KeyState {
  active: number;
  waiters: Waiter[];
}

/**
 * A queue for the upstream connections, fair across callers: each key (a credential) holds at
 * most `maxPerKey` slots, and a freed slot goes to the waiting keys in turn (round robin), so a
 * burst from one key never makes another wait behind it.
 */
export function createFairQueue({ maxConcurrency, maxPerKey }: FairQueueOptions) {
  let active = 0;
  // Insertion order is the turn order: a key served goes to the back.
  const keys = new Map<string, KeyState>();

  const stateOf = (key: string) => {
    let state = keys.get(key);
    if (!state) keys.set(key, (state = { active: 0, waiters: [] }));
    return state;
  };
  const forget = (key: string, state: KeyState) => {
    if (state.active === 0 && state.waiters.length === 0) keys.delete(key);
  };
  const take = (key: string, state: KeyState): Release => {
    active++;
    state.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active--;
      state.active--;
      forget(key, state);
      next();
    };
  };
  const next = () => {
    for (const [key, state] of keys) {
      if (active >= maxConcurrency) return;
      if (state.waiters.length === 0 || state.active >= maxPerKey) continue;
      keys.delete(key);
      keys.set(key, state);
      state.waiters.shift()!.grant();
      return next();
    }
  };

  /**
   * Waits for a slot for `key`. Rejects with BUDGET_EXCEEDED when `deadline` (epoch ms) passes
   * first, and with the signal's reason when the caller leaves; neither ever held a slot.
   */
  function acquire(key: string, deadline: number, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const state = stateOf(key);
    if (active < maxConcurrency && state.active < maxPerKey && state.waiters.length === 0) {
      return Promise.resolve(take(key, state));
    }
    return new Promise<Release>((resolve, reject) => {
      const leave = (reason: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        state.waiters.splice(state.waiters.indexOf(waiter), 1);
        forget(key, state);
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
          resolve(take(key, state));
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      state.waiters.push(waiter);
    });
  }

  return { acquire };
}

export type FairQueue = ReturnType<typeof createFairQueue>;
