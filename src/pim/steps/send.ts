import { request, type Dispatcher } from 'undici';
import type { AdmissionDispatchOptions } from '../admission/admission.ts';
import { readAnswer } from '../rest/answer.ts';
import { pimError, PimError } from '../rest/errors.ts';
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
}

/** The innermost step: one GET through the dispatcher, its body read as an Answer, its failure classified. */
export function createSend({ base, dispatcher, maxBodyBytes, secretsOf }: SendOptions): Send {
  const checkedUrl = urlChecker(base);
  return async (
    pimRequest,
    { headers, signal, deadline, timeoutMs, bytes, queueKey, queueShare, partition, joined },
  ) => {
    // Read by the admission interceptor: the budget bounds both the queue wait and the call.
    // The HTTP cache passes the same object on (a revalidation too): admission marks a call it sends.
    const sent: NonNullable<AdmissionDispatchOptions['sent']> = { wire: false };
    const admitted: AdmissionDispatchOptions = { deadline, timeoutMs, queueKey, queueShare, partition, joined, sent };
    try {
      const response = await request(checkedUrl(pimRequest.path), {
        dispatcher,
        method: 'GET',
        // The body is read as it comes: without `identity` a PIM or gateway may send it compressed.
        headers: { ...headers, accept: 'application/json', 'accept-encoding': 'identity' },
        signal,
        ...admitted,
      });
      // Confirmed by a 304, the stored answer is as fresh as the PIM's word (RFC 9111 §4.3.4): undici replays it
      // with the Age and Date it had before, which would make it stale.
      if (sent.confirmed) {
        response.headers.age = '0';
        delete response.headers.date;
      }
      const answer = await readAnswer(response, maxBodyBytes, secretsOf(headers), bytes);
      return sent.wire ? answer : { ...answer, cached: true };
    } catch (error) {
      if (error instanceof PimError) {
        if (!sent.wire) error.cached = true;
        throw error;
      }
      // The caller went away: let its own abort reason through rather than blame the PIM.
      if (signal?.aborted) throw signal.reason;
      throw classifyFailure(error);
    }
  };
}

const timeoutCodes = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const unavailableCodes = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

function classifyFailure(error: unknown): PimError {
  const code = (error as { code?: string }).code ?? '';
  if (timeoutCodes.has(code)) return pimError('UPSTREAM_TIMEOUT', error);
  if (unavailableCodes.has(code)) return pimError('UPSTREAM_UNAVAILABLE', error);
  return pimError('UPSTREAM_ERROR', error);
}
