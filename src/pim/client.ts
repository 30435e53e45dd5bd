import { Agent, request, type Dispatcher } from 'undici';
import { parseRetryAfter, pimError, pimErrorFromStatus, PimError } from './errors.ts';
import { createResponseCache, type ResponseCacheOptions } from './cache.ts';
import { createCoalescing } from './coalesce.ts';
import { createCredentialKey } from './credential.ts';
import { createCallSignal } from './deadline.ts';
import { freshnessOf } from './freshness.ts';
import { checkedUrl, readLimitedText } from './guards.ts';
import { createResilience, type ResilienceHooks, type ResilienceOptions } from './resilience.ts';
import type { Answer, Layer, Send, UpstreamStatus } from './types.ts';

export interface PimClientOptions {
  /** Scheme, host and optional path prefix in front of `/pxm/pimapi/v1`. */
  baseUrl: string;
  connectTimeoutMs: number;
  /** Deadline of one upstream call, headers and body included. */
  requestTimeoutMs: number;
  /** Upstream connections, and so calls in flight at once. */
  maxConcurrency: number;
  /** Lower-case headers that identify the caller; coalescing and caching never cross them. */
  credentialHeaders: readonly string[];
  /** Share identical in-flight GETs of one credential. */
  coalesce: boolean;
  /** HTTP cache of upstream answers; false turns it off. */
  cache: Omit<ResponseCacheOptions, 'credentialKey'> | false;
  /** Metrics and spans; innermost, so each attempt (every retry) is measured with its own status. */
  telemetry?: Layer | undefined;
  /** Largest upstream body read; a bigger one is UPSTREAM_ERROR. */
  maxBodyBytes: number;
  /** Retries and circuit breaker, and what they report. */
  resilience: ResilienceOptions & ResilienceHooks;
}

/** Speaks HTTP to the REST service; knows nothing about GraphQL. */
export interface PimClient {
  get: Send;
  close(): Promise<void>;
  /** Breaker state, for readiness and metrics. */
  status: UpstreamStatus;
}

/** Creates the upstream client around one pooled undici Agent. */
export function createPimClient({
  baseUrl,
  connectTimeoutMs,
  requestTimeoutMs,
  maxConcurrency,
  credentialHeaders,
  coalesce,
  cache: cacheOptions,
  telemetry,
  maxBodyBytes,
  resilience: resilienceOptions,
}: PimClientOptions): PimClient {
  const base = new URL(baseUrl);
  const agent = new Agent({
    connect: { timeout: connectTimeoutMs },
    connections: maxConcurrency,
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
  });
  const credentialKey = createCredentialKey(credentialHeaders);
  const cache = cacheOptions === false ? undefined : createResponseCache({ ...cacheOptions, credentialKey });
  const dispatcher = cache ? agent.compose(cache.interceptor) : agent;

  const send: Send = async (pimRequest, { headers, signal, deadline }) => {
    // The request's overall budget caps each call's own deadline; a spent budget sends nothing.
    const timeoutMs = Math.min(requestTimeoutMs, deadline - Date.now());
    if (timeoutMs <= 0) throw pimError('UPSTREAM_TIMEOUT', new Error('operation budget spent'));
    const call = createCallSignal(signal, timeoutMs);
    try {
      const response = await request(checkedUrl(base, pimRequest.path), {
        dispatcher,
        method: 'GET',
        headers: { ...headers, accept: 'application/json' },
        signal: call.signal,
      });
      return await readAnswer(response, maxBodyBytes);
    } catch (error) {
      if (error instanceof PimError) throw error;
      // The caller went away: let its own abort reason through rather than blame the PIM. The
      // call's signal is the one to ask: a server request's own signal may report it late.
      if (call.signal.aborted && !call.timedOut) throw signal?.aborted ? signal.reason : call.signal.reason;
      throw classifyFailure(error, call.timedOut);
    } finally {
      call.release();
    }
  };
  const resilience = createResilience(resilienceOptions);
  // Outermost first: each layer sees the calls of the one before it. Coalescing shares one flight, and
  // so one breaker decision and one retry sequence; the HTTP cache sits inside send, in the dispatcher.
  const layers: Layer[] = [
    ...(coalesce ? [createCoalescing({ credentialKey })] : []),
    ...resilience.layers,
    ...(telemetry ? [telemetry] : []),
  ];
  const get = layers.reduceRight<Send>((next, layer) => layer(next), send);
  return {
    get,
    close: async () => void (await Promise.all([agent.close(), cache?.close()])),
    status: resilience.status,
  };
}

async function readAnswer(response: Dispatcher.ResponseData, maxBytes: number): Promise<Answer> {
  const { statusCode, headers } = response;
  const text = await readLimitedText(response, maxBytes);
  const body = parseJson(text);
  if (statusCode < 200 || statusCode > 299) {
    const error = pimErrorFromStatus(statusCode, body);
    error.retryAfterMs = parseRetryAfter(headers['retry-after']);
    throw error;
  }
  if (body === undefined) throw pimError('UPSTREAM_ERROR', new Error('2xx body is not JSON'), statusCode);
  return { body, freshness: freshnessOf(headers['cache-control'], headers['age']) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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

function classifyFailure(error: unknown, deadlinePassed: boolean): PimError {
  if (deadlinePassed) return pimError('UPSTREAM_TIMEOUT', error);
  const code = (error as { code?: string }).code ?? '';
  if (timeoutCodes.has(code)) return pimError('UPSTREAM_TIMEOUT', error);
  if (unavailableCodes.has(code)) return pimError('UPSTREAM_UNAVAILABLE', error);
  return pimError('UPSTREAM_ERROR', error);
}
