import { BrokenCircuitError } from 'cockatiel';
import { isUpstreamAnswer, PimError } from '../rest/errors.ts';

/** Where the upstream's state changes are logged; a pino logger fits. */
export interface StateLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
  debug(details: object, message: string): void;
}

/** Where the lines of several conditions go, and how often each may write one. */
interface LogSink {
  logger: StateLogger | undefined;
  /** At most one line per this many ms. */
  intervalMs: number;
}

/** Level and message of each state of one condition. */
type StateLines<S extends string> = Record<S, { level: 'warn' | 'info'; message: string }>;

/**
 * Logs the changes of one condition (breaker open or closed, upstream reachable or not), at most
 * one line per interval: changes inside the interval are logged when it ends, as the state then
 * and the number of changes since the last line, so a flapping upstream cannot flood the log.
 * `initial` is the state before any change, never logged itself.
 */
function createStateLog<S extends string>({ logger, intervalMs }: LogSink, initial: NoInfer<S>, lines: StateLines<S>) {
  let current = initial;
  let details: object = {};
  let loggedAt = -Infinity;
  let changes = 0;
  let timer: NodeJS.Timeout | undefined;
  // Closed with the client, before it destroys its pool: what that cuts (a refresh, a probe) says nothing of the upstream.
  let closed = false;

  const flush = () => {
    timer = undefined;
    if (changes === 0) return;
    const { level, message } = lines[current];
    logger?.[level]({ ...details, ...(changes > 1 ? { changes } : {}) }, message);
    loggedAt = Date.now();
    changes = 0;
  };

  return {
    /** Records the condition's state now; `more` goes into the line if it is logged. */
    set(state: S, more: object = {}) {
      if (closed || state === current) return;
      current = state;
      details = more;
      changes++;
      const wait = loggedAt + intervalMs - Date.now();
      if (wait <= 0) flush();
      else timer ??= setTimeout(flush, wait).unref();
    },
    close() {
      // A change still waiting for the interval's end (a real one, before the pool is destroyed) is written now: the
      // process ends before its timer would.
      clearTimeout(timer);
      flush();
      closed = true;
    },
  };
}

/** The upstream's log lines: the breaker opening and closing, the upstream failing and answering again. */
export function createUpstreamLog(logger: StateLogger | undefined, intervalMs: number) {
  const sink = { logger, intervalMs };
  const breakerLog = createStateLog<'open' | 'closed'>(sink, 'closed', {
    open: { level: 'warn', message: 'Upstream circuit breaker opened: calls fail fast with UPSTREAM_UNAVAILABLE' },
    closed: { level: 'info', message: 'Upstream circuit breaker closed: calls go through again' },
  });
  const reachLog = createStateLog<'unreachable' | 'garbled' | 'answering'>(sink, 'answering', {
    unreachable: { level: 'warn', message: 'Upstream not answering' },
    garbled: { level: 'warn', message: 'Upstream answers in something other than valid HTTP' },
    answering: { level: 'info', message: 'Upstream answers again' },
  });
  return {
    breaker: (state: 'open' | 'closed') => breakerLog.set(state),
    answered: () => reachLog.set('answering'),
    /** Notes a failed call: an answer (4xx) still says the upstream is there; no answer says it is not. */
    failed(error: unknown) {
      if (!(error instanceof PimError)) return;
      const { status, code, reason } = error;
      if (reason) logger?.debug({ status, code, reason }, 'The catalog service refused a call');
      const { name, message, code: cause } = (error.cause ?? {}) as Partial<Error> & { code?: string };
      // Stopped by the breaker itself (admission asked it): nothing new about the upstream.
      if (error.cause instanceof BrokenCircuitError) return;
      if (isUpstreamAnswer(error)) reachLog.set('answering');
      // No status read because the response could not be parsed: undici's error says how, in fixed words of
      // its own (llhttp's reason, "Headers Overflow Error"), never the bytes it read.
      else if (name === 'HTTPParserError' || cause === 'UND_ERR_HEADERS_OVERFLOW') {
        reachLog.set('garbled', { code, cause: cause ?? name, detail: message });
      }
      // Refused, reset, timed out, unavailable, or no answer read for another reason (a TLS handshake that
      // failed: its code says why).
      else if (
        code === 'UPSTREAM_UNAVAILABLE' ||
        code === 'UPSTREAM_TIMEOUT' ||
        (code === 'UPSTREAM_ERROR' && status === undefined)
      ) {
        reachLog.set('unreachable', { code, cause });
      }
    },
    close() {
      breakerLog.close();
      reachLog.close();
    },
  };
}

/**
 * The log lines of upstream faults that are configuration or outage rather than one caller's: the
 * server's own key refused, and 2xx answers that are not JSON (a maintenance page, a proxy's page).
 */
export function createFaultLog(logger: StateLogger | undefined, intervalMs: number) {
  const sink = { logger, intervalMs };
  const keyLog = createStateLog<'refused' | 'accepted'>(sink, 'accepted', {
    refused: {
      level: 'warn',
      message:
        'Upstream refuses the server key (PIM_API_KEY, HTTP 401): keyless calls fail with SERVER_CREDENTIALS_REJECTED',
    },
    accepted: { level: 'info', message: 'Upstream accepts the server key again' },
  });
  const bodyLog = createStateLog<'not-json' | 'encoded' | 'json'>(sink, 'json', {
    'not-json': {
      level: 'warn',
      message:
        'Upstream answers 2xx with a body that is not JSON (a maintenance or proxy page?): calls fail with UPSTREAM_ERROR',
    },
    encoded: {
      level: 'warn',
      message:
        'Upstream answers 2xx compressed although calls ask for Accept-Encoding: identity (a gateway in between?): calls fail with UPSTREAM_ERROR',
    },
    json: { level: 'info', message: 'Upstream answers JSON again' },
  });
  return {
    keyRefused: () => keyLog.set('refused'),
    keyAccepted: () => keyLog.set('accepted'),
    /** A 2xx not read as JSON; `encoding` names the content coding it came in, if any. */
    notJson: (status: number | undefined, encoding?: string) =>
      encoding === undefined ? bodyLog.set('not-json', { status }) : bodyLog.set('encoded', { status, encoding }),
    json: () => bodyLog.set('json'),
    close() {
      keyLog.close();
      bodyLog.close();
    },
  };
}
