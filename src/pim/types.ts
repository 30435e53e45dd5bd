import type { ByteAccount } from './byte-limits.ts';
import type { PimRequest } from './endpoints.ts';

/** How long an upstream answer may be reused, as its Cache-Control and Age headers say. */
export interface Freshness {
  /** Seconds a browser may keep it from now (its `max-age`, less `Age`); 0 when it must not be reused. */
  maxAgeS: number;
  /** Seconds a shared cache may keep it from now (`s-maxage`, else `max-age`, less `Age`); 0 when not shared. */
  sharedMaxAgeS: number;
  /** True when a shared cache may keep it (no `private`, no `no-store`, an explicit lifetime). */
  shared: boolean;
}

/** One upstream answer: the parsed JSON body of a 2xx response and its freshness. */
export interface Answer {
  body: unknown;
  freshness: Freshness;
}

/** What one upstream call needs besides the request itself; every layer passes it on. */
export interface CallOptions {
  /** Sent upstream: credentials, request id, trace context. */
  headers: Record<string, string>;
  /** The caller's cancellation; aborting it stops the call. */
  signal?: AbortSignal | undefined;
  /** Epoch ms by which the GraphQL request's upstream work must be done (its budget). */
  deadline: number;
  /** The GraphQL request's upstream bytes; every body read is charged to it. */
  bytes: ByteAccount;
  /** Fair-queue partition of the call; unset, its credential's. The readiness probe has its own. */
  queueKey?: string | undefined;
  /** Who shares the partition's slots fairly with whom: the GraphQL request, or the client's address. */
  queueShare?: string | undefined;
}

/** Sends one GET and resolves with its Answer, else rejects with a PimError (or the caller's abort reason). */
export type Send = (request: PimRequest, call: CallOptions) => Promise<Answer>;

/** A policy wrapped around the next step of an upstream call (coalescing, breaker, retries, telemetry). */
export type Layer = (next: Send) => Send;

/** What readiness checks and metrics read about the upstream; never written from outside. */
export interface UpstreamStatus {
  readonly breaker: 'closed' | 'open' | 'half-open';
}
