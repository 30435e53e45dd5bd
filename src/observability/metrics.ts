import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { droppedLogLines, MAX_WAITING_LOG_BYTES } from '../logger.ts';
import { breakerStateNames } from '../pim/steps/breaker.ts';
import type { UpstreamStatus } from '../pim/rest/types.ts';

/**
 * Seconds; upstream calls and operations share the buckets so the two can be compared. Up to past the defaults of
 * PIM_TIMEOUT_MS (10 s) and GRAPHQL_BUDGET_MS (20 s), so a slow PIM's calls and operations are not all `+Inf`; as many
 * as before (the 5 ms one went), so a scrape of 100 operation names stays under 256 KB.
 */
const buckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25];

export interface MetricsOptions {
  /** Where the breaker state is read at scrape time. */
  upstreamStatus?: () => UpstreamStatus | undefined;
  /** Where the weight of the last-known-good copies is read at scrape time. */
  staleBytes?: () => number;
  /** Where the upstream calls waiting for a connection are counted at scrape time. */
  queuedCalls?: () => number;
  /** Where the cache of serialized results' figures are read at scrape time; undefined while it is off. */
  responseCache?: () => ResponseCacheFigures | undefined;
}

/** The cache of serialized results (plugins/response-cache.ts): entries, their counted bytes, hits so far. */
export interface ResponseCacheFigures {
  entries: number;
  bytes: number;
  hits: number;
}

/**
 * Creates the metrics of one app on its own registry, never prom-client's global one, so
 * several apps in one process (tests, blue/green) don't clash over metric names.
 */
export function createMetrics({ upstreamStatus, staleBytes, queuedCalls, responseCache }: MetricsOptions = {}) {
  const registry = new Registry();
  // Node.js process metrics: CPU, memory, event loop.
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  // Metrics by labels on this app's registry; the label names type what `inc`/`observe` accept.
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Histogram({ name, help, labelNames, buckets, registers });
  // Figures read at scrape time (a count kept elsewhere: each registry adds what it has not seen yet).
  const gauge = (name: string, help: string, read: () => number | undefined) =>
    new Gauge({
      name,
      help,
      registers,
      collect: function () {
        const value = read();
        if (value !== undefined) this.set(value);
      },
    });
  const seenCount = (name: string, help: string, read: () => number | undefined) => {
    let seen = 0;
    return new Counter({
      name,
      help,
      registers,
      collect: function () {
        const now = read();
        if (now === undefined) return;
        this.inc(now - seen);
        seen = now;
      },
    });
  };
  return {
    registry,
    /** The registry in Prometheus text format, for /metrics and for a listener of its own (METRICS_PORT). */
    scrape: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    operations: counter('graphql_operations_total', 'GraphQL operations executed, by type and name.', [
      'operation_type',
      'operation_name',
    ]),
    operationDuration: histogram(
      'graphql_operation_duration_seconds',
      'Time to execute a GraphQL operation, deferred parts included.',
      ['operation_type', 'operation_name'],
    ),
    errors: counter('graphql_errors_total', 'Errors in GraphQL responses, by extensions.code.', ['code']),
    refusals: counter(
      'http_requests_refused_total',
      'Requests the HTTP server refused before GraphQL saw them, by status (503: HTTP_MAX_IN_FLIGHT).',
      ['status'],
    ),
    clientDisconnects: new Counter({
      name: 'graphql_client_disconnects_total',
      help: 'GraphQL requests whose client went away before their whole answer was sent.',
      registers,
    }),
    upstreamCalls: counter(
      'pim_upstream_requests_total',
      'Attempts sent to the PIM REST service, by REST operation and HTTP status (2xx, or the error code when no response came).',
      ['operation', 'status'],
    ),
    upstreamDuration: histogram(
      'pim_upstream_request_duration_seconds',
      'Latency of one attempt against the PIM REST service, by REST operation and status.',
      ['operation', 'status'],
    ),
    dedupHits: counter(
      'pim_dedup_hits_total',
      'Upstream loads answered by the per-request DataLoader cache instead of a new call.',
      ['operation'],
    ),
    retries: counter(
      'pim_upstream_retries_total',
      'Upstream attempts that repeated an earlier failed attempt of the same call.',
      ['operation'],
    ),
    cacheOutcomes: counter(
      'pim_cache_outcomes_total',
      'Upstream loads by how they were answered: hit (fresh in the cache), miss (the PIM was asked), stale, or revalidated (a background refresh came back).',
      ['outcome'],
    ),
    staleAnswers: counter(
      'pim_stale_answers_total',
      'Upstream loads answered with stale data, by reason: revalidating, or the code of the PIM failure it stood in for.',
      ['reason'],
    ),
    staleStoreBytes: gauge(
      'pim_stale_store_bytes',
      'Weight of the in-process last-known-good copies, as PIM_STALE_MAX_BYTES bounds it.',
      () => staleBytes?.(),
    ),
    queuedCalls: gauge(
      'pim_upstream_calls_queued',
      'Upstream calls waiting for a connection to the PIM (PIM_MAX_CONCURRENCY, fair across credentials).',
      () => queuedCalls?.(),
    ),
    upstreamFaults: counter(
      'pim_upstream_faults_total',
      'Upstream answers that reveal a configuration or outage fault: the server key refused (server_key_refused), a 2xx that is not JSON (not_json).',
      ['fault'],
    ),
    redisFailures: counter(
      'redis_command_failures_total',
      'Redis commands that failed or timed out, or were not sent while Redis is left alone after failures in a row (each answered as a miss or a skipped write), by store (cache, apq, stale).',
      ['store'],
    ),
    spansUnexported: counter(
      'otel_spans_unexported_total',
      'Spans the OTLP exporter could not send (the collector down, unreachable or refusing them), or dropped while it was slow (the queue full): missing from the traces.',
      [],
    ),
    // Counted by the logger for the whole process.
    logLinesDropped: seenCount(
      'log_lines_dropped_total',
      `Log lines dropped because stdout did not take them and ${MAX_WAITING_LOG_BYTES / 2 ** 20} MiB were already waiting.`,
      droppedLogLines,
    ),
    responseCacheHits: seenCount(
      'graphql_response_cache_hits_total',
      'GraphQL requests answered from the cache of serialized results (RESPONSE_CACHE_MAX_BYTES).',
      () => responseCache?.()?.hits,
    ),
    responseCacheEntries: gauge(
      'graphql_response_cache_entries',
      'Serialized results held by the cache of results.',
      () => responseCache?.()?.entries,
    ),
    responseCacheBytes: gauge(
      'graphql_response_cache_bytes',
      'Weight of the cache of results, as RESPONSE_CACHE_MAX_BYTES bounds it.',
      () => responseCache?.()?.bytes,
    ),
    breaker: new Gauge({
      name: 'pim_upstream_breaker_state',
      help: 'Circuit breaker in front of the PIM: 1 for its current state (closed, open, half-open).',
      labelNames: ['state'] as const,
      registers,
      // Read at scrape time, so the gauge can never lag behind the breaker.
      collect() {
        const current = upstreamStatus?.()?.breaker;
        if (current === undefined) return;
        for (const state of breakerStateNames) this.set({ state }, state === current ? 1 : 0);
      },
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
