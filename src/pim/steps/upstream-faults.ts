import { isUnreadableAnswer, isUpstreamAnswer, pimError, PimError } from '../rest/errors.ts';
import type { Layer } from '../rest/types.ts';
import { createFaultLog, type StateLogger } from './upstream-log.ts';

/** Faults of configuration or outage that an answer reveals, as metrics label them. */
export type UpstreamFault = 'server_key_refused' | 'not_json';

/** What the step reads of the calls' credentials (pim/credential.ts builds them, above the steps). */
export interface FaultCredentials {
  /** Lower-case names of every credential header a call may carry. */
  names: readonly string[];
  /** The header and value of the server's own key (PIM_API_KEY); undefined when none is set. */
  serverKey: { header: string; value: string } | undefined;
  /** Told of each call the PIM answered other than 401, 403 or 429, by its headers: its credential is real. */
  accepted(headers: Readonly<Record<string, string>>): void;
  /** Told of each call the PIM refused with 401, by its headers. */
  refused(headers: Readonly<Record<string, string>>): void;
}

export interface UpstreamFaultsOptions {
  credentials: FaultCredentials;
  logger: StateLogger | undefined;
  /** At most one line per this many ms for each fault. */
  intervalMs: number;
  /** Told about each call that revealed a fault. */
  onFault: (fault: UpstreamFault) => void;
}

/**
 * True for an upstream answer that says nothing good about the PIM serving: the server key
 * refused, or a 2xx that is not JSON. Readiness counts these as failures, not as answers.
 */
export function isFaultyAnswer(error: unknown): boolean {
  return error instanceof PimError && (error.code === 'SERVER_CREDENTIALS_REJECTED' || isUnreadableAnswer(error));
}

/** A failed probe call that is still the PIM answering (a 404 for its made-up id), not a faulty answer. */
export const isProbeAnswer = (error: unknown): boolean =>
  error instanceof PimError && isUpstreamAnswer(error) && !isFaultyAnswer(error);

/** A redirect: never followed, so every call that meets one fails with it. */
export const isRedirect = (status: number | undefined): boolean =>
  status !== undefined && status >= 300 && status < 400;

/**
 * A client step that tells configuration and outage faults apart from one caller's failures: a
 * 401 to a call carrying only the server key becomes SERVER_CREDENTIALS_REJECTED (the caller sent
 * nothing to be refused), and a 2xx that is not JSON is noted. Both are counted and logged.
 */
export function createUpstreamFaults({ credentials, logger, intervalMs, onFault }: UpstreamFaultsOptions) {
  const log = createFaultLog(logger, intervalMs);
  const { names: credentialNames, serverKey } = credentials;
  // The server key alone: no credential of the caller's went with it.
  const onServerKey = (headers: Record<string, string>) =>
    serverKey !== undefined &&
    headers[serverKey.header] === serverKey.value &&
    credentialNames.every((name) => name === serverKey.header || headers[name] === undefined);

  const layer: Layer = (next) => async (request, call) => {
    const serverKeyOnly = onServerKey(call.headers);
    try {
      const answer = await next(request, call);
      // An answer the HTTP cache replayed never reached the PIM: it says nothing of the PIM now (its key, its pages).
      if (!answer.cached) {
        log.json();
        if (serverKeyOnly) log.keyAccepted();
      }
      credentials.accepted(call.headers);
      return answer;
    } catch (error) {
      if (!(error instanceof PimError) || !isUpstreamAnswer(error)) throw error;
      // A 401 is the key refused; a 403 may be about one resource only, and a 429 may come before the key is checked.
      // A 2xx that is not the PIM's JSON, a redirect or a 4xx page that is not its envelope (a maintenance page, a
      // proxy's login page, nginx's 400 for a header past its buffers) comes whatever the key: no word on it.
      const unreadable = isUnreadableAnswer(error);
      const anyKey = unreadable || isRedirect(error.status) || error.page === true;
      if (error.status === 401) credentials.refused(call.headers);
      else if (error.status !== 403 && error.status !== 429 && !anyKey) credentials.accepted(call.headers);
      if (unreadable) {
        onFault('not_json');
        log.notJson(error.status, error.encoding);
      }
      if (!serverKeyOnly) throw error;
      if (error.status !== 401) {
        // Nor, for the same reasons, on the server key: a key refused stays so in the log until the PIM reads it.
        if (error.status !== 429 && !anyKey && !error.cached) log.keyAccepted();
        throw error;
      }
      onFault('server_key_refused');
      log.keyRefused();
      throw pimError('SERVER_CREDENTIALS_REJECTED', error, 401);
    }
  };
  return { layer, close: log.close };
}
