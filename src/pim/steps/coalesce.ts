import type { Answer, CallOptions, Layer } from '../rest/types.ts';

interface Flight {
  result: Promise<Answer>;
  controller: AbortController;
  waiters: number;
  settled: boolean;
}

/**
 * Creates the step that lets concurrent identical GETs of one credential partition share one
 * upstream call while it is in flight. Waiters leave on their own abort signal; the shared call
 * is aborted only when the last waiter has left, and its result or error goes to everyone still waiting.
 */
export function createCoalescing(): Layer {
  return (next) => {
    const flights = new Map<string, Flight>();

    const start = (key: string, ...[request, call]: Parameters<typeof next>): Flight => {
      const controller = new AbortController();
      let result: Promise<Answer>;
      try {
        // The first caller's budget bounds the shared call; every waiter gets its one Answer.
        result = next(request, { ...call, signal: controller.signal });
      } catch (error) {
        result = Promise.reject(error);
      }
      const flight: Flight = { result, controller, waiters: 0, settled: false };
      const settle = () => {
        flight.settled = true;
        if (flights.get(key) === flight) flights.delete(key);
      };
      // Also marks the rejection handled when every waiter has already left.
      result.then(settle, settle);
      flights.set(key, flight);
      return flight;
    };

    const leave = (key: string, flight: Flight, reason: unknown) => {
      flight.waiters -= 1;
      if (flight.waiters > 0 || flight.settled) return;
      // Nobody wants the answer any more: free the connection, and let the next caller start afresh.
      if (flights.get(key) === flight) flights.delete(key);
      flight.controller.abort(reason);
    };

    return (request, call: CallOptions) => {
      const { signal } = call;
      if (signal?.aborted) return Promise.reject(signal.reason);
      const key = `${call.partition} ${request.path}`;
      const flight = flights.get(key) ?? start(key, request, call);
      flight.waiters += 1;
      if (!signal) return flight.result;
      return new Promise<Answer>((resolve, reject) => {
        const onAbort = () => {
          leave(key, flight, signal.reason);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        flight.result.then(
          (value) => {
            signal.removeEventListener('abort', onAbort);
            resolve(value);
          },
          (error: unknown) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        );
      });
    };
  };
}
