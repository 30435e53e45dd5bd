import { request, type Dispatcher } from 'undici';
import type { AdmissionDispatchOptions } from '../admission/admission.ts';
import { readAnswer } from '../rest/answer.ts';
import { isUnreadableAnswer, pimError, PimError } from '../rest/errors.ts';
import { urlChecker } from '../rest/guards.ts';
import type { Send } from '../rest/types.ts';

export interface SendOptions {
  base: URL;
  /** The Agent with its interceptors (HTTP cache, admission) composed on. */
  dispatcher: Dispatcher;
  /** Largest upstream body read; a bigger one is UPSTREAM_ERROR. */
  maxBodyBytes: number;
  /** The credential values a call sends, blanked out of any body that echoes them. */
  secretsOf: (headers: Record<string, string>) => string[];
  /** Drops the HTTP cache's stored response of a path for a call's credential; absent without the HTTP cache. */
  dropStored?: ((path: string, headers: Record<string, string>) => Promise<void>) | undefined;
}

// Failures of a stored body's replay: by the HTTP cache alone, or confirmed by a 304 (its body the stored one's).
const replayed = new WeakSet<PimError>();

/**
 * The headers a call goes out with: its own, and how the body is asked for. The body is read as it comes: without
 * `identity` a PIM or gateway may send it compressed. A stored response's `Vary` values are those of these headers.
 */
export const sentHeaders = (headers: Readonly<Record<string, string>>): Record<string, string> => ({
  ...headers,
  accept: 'application/json',
  'accept-encoding': 'identity',
});

/** The innermost step: one GET through the dispatcher, its body read as an Answer, its failure classified. */
export function createSend({ base, dispatcher, maxBodyBytes, secretsOf, dropStored }: SendOptions): Send {
  const checkedUrl = urlChecker(base);
  const send: Send = async (
    pimRequest,
    { headers, signal, deadline, timeoutMs, bytes, queueKey, queueShare, partition, joined, attempt },
  ) => {
    // Read by the admission interceptor: the budget bounds both the queue wait and the call.
    // The HTTP cache passes the same object on (a revalidation too): admission marks a call it sends.
    const sent: NonNullable<AdmissionDispatchOptions['sent']> = { wire: false };
    const admitted: AdmissionDispatchOptions = { deadline, timeoutMs, queueKey, queueShare, partition, joined, sent };
    try {
      const response = await request(checkedUrl(pimRequest.path), {
        dispatcher,
        method: 'GET',
        headers: sentHeaders(headers),
        signal,
        ...admitted,
      });
      // Confirmed by a 304, the stored answer is as fresh as the PIM's word (RFC 9111 §4.3.4): undici replays it
      // with the Age and Date it had before, which would make it stale, and with its old Cache-Control and Expires.
      // The 304's own fields say how fresh it is now: its Cache-Control, Expires, Date and Age (a CDN's copy) replace
      // the stored ones; without an Age or Date of its own the answer is new.
      if (sent.confirmed) {
        const confirmation = sent.confirmation ?? {};
        response.headers.age = '0';
        delete response.headers.date;
        for (const name of ['cache-control', 'expires', 'date', 'age']) {
          const value = confirmation[name];
          if (typeof value === 'string' || Array.isArray(value)) response.headers[name] = value as string | string[];
        }
      }
      const answer = await readAnswer(response, maxBodyBytes, secretsOf(headers), bytes);
      if (!sent.wire) return { ...answer, cached: true };
      // The earlier of the wall clock read as the call left and the one worked out now: a clock stepped either way
      // meanwhile (NTP) never moves the call past a 401 heard in between.
      if (answer.kept && sent.sentAtEpoch !== undefined && sent.sentAt !== undefined) {
        answer.kept.sentAt = Math.min(sent.sentAtEpoch, Date.now() - (performance.now() - sent.sentAt));
      }
      return answer;
    } catch (error) {
      if (error instanceof PimError) {
        if (!sent.wire) error.cached = true;
        if (!sent.wire || sent.confirmed) replayed.add(error);
        throw error;
      }
      // The caller went away: let its own abort reason through rather than blame the PIM.
      if (signal?.aborted) throw signal.reason;
      throw classifyFailure(error);
    } finally {
      // The telemetry step's: an attempt that never left the queue (its caller gone, its budget spent) is none, and
      // one that did is timed from then.
      if (sent.wire && attempt) attempt.sentAt = sent.sentAt;
    }
  };
  if (!dropStored) return send;
  // A stored 2xx the HTTP cache replays (alone, or confirmed by a 304) that cannot be read (a gateway's page kept by its
  // max-age, a body cut short, an entry another version wrote) is dropped, and the PIM asked once more. Judged here,
  // where every answer is read anyway, so storing an answer costs no check of its own.
  return async (pimRequest, call) => {
    try {
      return await send(pimRequest, call);
    } catch (error) {
      if (!(error instanceof PimError) || !replayed.has(error)) throw error;
      if (!isUnreadableAnswer(error) && !isMomentaryFailure(error)) throw error;
      await dropStored(pimRequest.path, call.headers);
      return send(pimRequest, call);
    }
  };
}

// A stored 2xx whose envelope says 5xx or 429 (answer.ts makes it that status's error), replayed without the PIM: the
// HTTP cache never keeps such a status under its own (cache.ts `kept`), which would outlast the outage and count as a
// fault of an upstream never called; under a 2xx it is dropped and the PIM asked again as well.
const isMomentaryFailure = (error: PimError): boolean =>
  error.cached === true && error.status !== undefined && (error.status >= 500 || error.status === 429);

const timeoutCodes = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
// The PIM could not be reached or its connection was lost: a DNS name or server failing, a host or network down, a
// connection refused, reset, aborted or gone silent (TCP keep-alive's ETIMEDOUT).
const unavailableCodes = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
]);

function classifyFailure(error: unknown): PimError {
  const code = (error as { code?: string }).code ?? '';
  if (timeoutCodes.has(code)) return pimError('UPSTREAM_TIMEOUT', error);
  if (unavailableCodes.has(code)) return pimError('UPSTREAM_UNAVAILABLE', error);
  return pimError('UPSTREAM_ERROR', error);
}
