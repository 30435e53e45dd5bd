/** One upstream call's abort signal: its own deadline, and the caller's signal if it has one. */
export interface CallSignal {
  signal: AbortSignal;
  /** True once the deadline, not the caller, has aborted the call. */
  readonly timedOut: boolean;
  /** Clears the timer and leaves the caller's signal; call it once the body is read. */
  release(): void;
}

/**
 * Like `AbortSignal.any([caller, AbortSignal.timeout(ms)])`, but released when the call ends:
 * a finished call leaves no timer behind to fire later, and no composite signal for Node to track.
 */
export function createCallSignal(caller: AbortSignal | undefined, timeoutMs: number): CallSignal {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`upstream call exceeded ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const onAbort = () => controller.abort(caller!.reason);
  if (caller?.aborted) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    release() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}
