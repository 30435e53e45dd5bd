import { context } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { Agent } from 'undici';
import { createAdmission } from './admission/admission.ts';
import { createAnswerLookup } from './steps/answer-lookup.ts';
import { createByteLimits, type ByteAccount, type ByteLimitsOptions } from './rest/byte-limits.ts';
import { createHttpCache, type HttpCacheOptions } from './cache/cache.ts';
import { createCoalescing } from './steps/coalesce.ts';
import { createCredentialKey, createCredentialSecrets } from './credential.ts';
import { createFairQueue } from './admission/fair-queue.ts';
import { composeCall } from './pipeline.ts';
import { createBreaker, type ResilienceHooks, type ResilienceOptions } from './steps/breaker.ts';
import { createRetry } from './steps/retry.ts';
import { createSend } from './steps/send.ts';
import { createStaleServing, type StaleServingOptions } from './steps/stale-serving.ts';
import type { Answer, CallOptions, CallRequest, Layer, Send, UpstreamStatus } from './rest/types.ts';
import { PROBE_ANSWER_MS, probeRequest, type InputLimits, type PimRequest } from './rest/endpoints.ts';

export interface PimClientOptions {
  /** Scheme, host and optional path prefix in front of `/pxm/pimapi/v1`. */
  baseUrl: string;
  connectTimeoutMs: number;
  /** Deadline of one upstream call, headers and body included. */
  requestTimeoutMs: number;
  /** Upstream connections, and so calls in flight at once; the rest wait in a queue fair across credentials. */
  maxConcurrency: number;
  /** Calls one credential may have in flight at once. */
  maxConcurrencyPerCredential: number;
  /** Lower-case headers that identify the caller; coalescing and caching never cross them. */
  credentialHeaders: readonly string[];
  /** Share identical in-flight GETs of one credential. */
  coalesce: boolean;
  /** HTTP cache of upstream answers; false turns it off. */
  cache: Omit<HttpCacheOptions, 'credentialKey' | 'credentialHeaders' | 'baseUrl' | 'invalidatedSince'> | false;
  /** Stale answers: last-known-good on failures, stale-while-revalidate, invalidation; absent: none. */
  stale?: Omit<StaleServingOptions, 'requestTimeoutMs' | 'defaultTtlMs' | 'openBytes'> | undefined;
  /** Metrics and spans of each attempt (every retry) with its own status. */
  telemetry?: Layer | undefined;
  /** Tells configuration and outage faults apart from one caller's failures (upstream-faults.ts). */
  upstreamFaults?: Layer | undefined;
  /** Largest upstream body read; a bigger one is UPSTREAM_ERROR. */
  maxBodyBytes: number;
  /** Caps on upstream bytes per GraphQL request and held by the process at once. */
  byteLimits: ByteLimitsOptions;
  /** Retries and circuit breaker, and what they report. */
  resilience: ResilienceOptions & ResilienceHooks;
  /** The upstream's probe call: built with the input limits of every request, sent with the server's own credential. */
  probe: { limits: InputLimits; headers: Record<string, string> };
}

/** Speaks HTTP to the REST service; knows nothing about GraphQL. */
export interface PimClient {
  get(request: PimRequest, call: CallRequest): Promise<Answer>;
  /** The credential partition of a call's headers: compute it once per GraphQL request, pass it with each call. */
  partition(headers: Readonly<Record<string, string>>): string;
  close(): Promise<void>;
  /** Breaker state, for readiness and metrics. */
  status: UpstreamStatus;
  /**
   * Sends readiness's probe call through every step, past every cache, in a queue partition of its own that is
   * let out first; not answered within PROBE_ANSWER_MS, it fails with BUDGET_EXCEEDED. The breaker sends the same
   * call, from below itself, before it opens.
   */
  probe(): Promise<Answer>;
  /**
   * Opens the byte account of one GraphQL request (or probe) of `credential` (its queue partition); release it
   * when its response is done.
   */
  openByteAccount(credential: string): ByteAccount;
  /** Ends the freshness of every cached answer tagged `tag` (see tags.ts), or of all with `all`. */
  invalidate(tag: string): Promise<void>;
  /** Epoch ms of the latest invalidation (here or another instance's, as read) matching the upstream `path`; 0: none. */
  invalidatedSince(path: string): number;
  /** Bytes of the in-process last-known-good copies, for metrics. */
  staleBytes(): number;
  /** Calls waiting for a connection to the PIM now, for metrics. */
  queued(): number;
  /**
   * Fails the calls waiting for a connection (BUDGET_EXCEEDED), those that would wait from now on, those the PIM
   * has not begun to answer (BUDGET_EXCEEDED, unread) and those waiting to retry (with the failure they waited on): called as the
   * shutdown's grace is about to end, so their requests are answered rather than cut.
   */
  closeQueue(): void;
}

// The probes' queue partitions (no credential key is spelt so), let out before any caller's when a slot frees.
const READINESS_PROBE = 'readiness-probe';
const BREAKER_PROBE = 'breaker-probe';
const PROBE_PARTITIONS = [BREAKER_PROBE, READINESS_PROBE];

/** Creates the upstream client around one pooled undici Agent. */
export function createPimClient({
  baseUrl,
  connectTimeoutMs,
  requestTimeoutMs,
  maxConcurrency,
  maxConcurrencyPerCredential,
  credentialHeaders,
  coalesce,
  cache: cacheOptions,
  stale: staleOptions,
  telemetry,
  upstreamFaults,
  maxBodyBytes,
  byteLimits,
  resilience: resilienceOptions,
  probe: probeOptions,
}: PimClientOptions): PimClient {
  const bytesHeld = createByteLimits(byteLimits);
  const base = new URL(baseUrl);
  const agent = new Agent({
    connect: { timeout: connectTimeoutMs },
    connections: maxConcurrency,
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
  });
  const credentialKey = createCredentialKey(credentialHeaders);
  const secretsOf = createCredentialSecrets(credentialHeaders);
  const stale =
    staleOptions &&
    createStaleServing({
      ...staleOptions,
      requestTimeoutMs,
      defaultTtlMs: cacheOptions === false ? 0 : cacheOptions.defaultTtlMs,
      openBytes: (credential) => bytesHeld.open(credential),
      // Read only once an invalidation has happened, when `cache` exists.
      onInvalidation: () => (cache?.forgetAnswers(), staleOptions.onInvalidation?.()),
    });
  const invalidatedSince = stale?.invalidatedSince ?? (() => 0);
  const cache =
    cacheOptions === false
      ? undefined
      : createHttpCache({ ...cacheOptions, credentialKey, credentialHeaders, baseUrl, invalidatedSince });
  const probeCall = probeRequest(probeOptions.limits);
  // no-store keeps the probe out of the HTTP cache altogether: it never waits on its store (Redis).
  const probeHeaders = { ...probeOptions.headers, 'cache-control': 'no-cache, no-store' };
  // The probe through `send`, in its own queue partition `queueKey` (no credential key is spelt so). Readiness's
  // has PROBE_ANSWER_MS in all, queue wait included, and ends by its budget, no fault of anyone's. The breaker's may
  // wait a whole PIM_TIMEOUT_MS for a connection (a wait says nothing of the PIM: it may be other calls holding them
  // all), then has PROBE_ANSWER_MS (no more than a call) to be answered, past which it is a timeout, a fault it counts.
  const sendProbe = (send: Send, queueKey: string, forBreaker: boolean) => {
    const bytes = bytesHeld.open(queueKey);
    // The breaker's: a second's slack past a whole call's time, as slots free when calls time out.
    const deadline = Date.now() + PROBE_ANSWER_MS + (forBreaker ? requestTimeoutMs + 1_000 : 0);
    const timeoutMs = forBreaker ? Math.min(PROBE_ANSWER_MS, requestTimeoutMs) : undefined;
    const options = { headers: probeHeaders, deadline, timeoutMs, bytes, queueKey, partition: queueKey };
    return send(probeCall, options).finally(() => bytes.release());
  };
  const queue = createFairQueue({ maxConcurrency, maxPerKey: maxConcurrencyPerCredential, first: PROBE_PARTITIONS });
  // Aborted as the queue closes (closeQueue): every call at the PIM or waiting to ask it again is let go with it.
  const stopping = new AbortController();
  const breaker = createBreaker({
    ...resilienceOptions,
    trialWaitMs: requestTimeoutMs,
    shutdown: stopping.signal,
    // Untraced as readiness's (below): the same made-up group, no caller's work, though a caller's fault set it off.
    probe: (send) => context.with(suppressTracing(context.active()), () => sendProbe(send, BREAKER_PROBE, true)),
  });
  const call = composeCall({
    answerLookup: cache && createAnswerLookup({ cache, onHit: () => stale?.onOutcome?.('hit'), invalidatedSince }),
    stale: stale?.layer,
    coalescing: coalesce
      ? createCoalescing({ invalidatedSince, shutdown: stopping.signal, trialWaitMs: requestTimeoutMs })
      : undefined,
    breaker: breaker.layer,
    retry: createRetry({ ...resilienceOptions, shutdown: stopping.signal }),
    upstreamFaults,
    telemetry,
    send: (dispatcher) => createSend({ base, dispatcher, maxBodyBytes, secretsOf, dropStored: cache?.drop }),
    httpCache: cache?.interceptor,
    admission: createAdmission({
      queue,
      keyOf: credentialKey,
      requestTimeoutMs,
      stop: breaker.stop,
      shutdown: stopping.signal,
    }),
    agent,
  });
  // Callers that bring no partition (the readiness probe, tests) get it computed here.
  const get = (request: PimRequest, options: CallRequest) =>
    call(
      request,
      options.partition === undefined
        ? { ...options, partition: credentialKey(options.headers) }
        : (options as CallOptions),
    );
  return {
    get,
    partition: credentialKey,
    close: async () => {
      breaker.close();
      // Destroyed, not closed: the server has drained its requests by now, and what is left (a background
      // refresh, a probe) must not hold the exit for its whole PIM_TIMEOUT_MS.
      await Promise.all([agent.destroy(), cache?.close(), stale?.close()]);
    },
    status: breaker.status,
    // Untraced: its 404 is the answer readiness wants, which a client span records as an error, and it is no caller's work.
    probe: () => context.with(suppressTracing(context.active()), () => sendProbe(get, READINESS_PROBE, false)),
    openByteAccount: (credential) => bytesHeld.open(credential),
    staleBytes: () => stale?.heldBytes() ?? 0,
    queued: queue.waiting,
    closeQueue: () => {
      queue.close();
      stopping.abort();
    },
    invalidate: async (tag) => {
      if (!stale) return cache?.forgetAnswers();
      await stale.invalidate(tag);
    },
    invalidatedSince,
  };
}
