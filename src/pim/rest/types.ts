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

/** What an upstream response's `cache-control` says about keeping and serving it once stale (RFC 5861). */
export interface StaleHints {
  /** `no-store`: never kept, not even as last-known-good. */
  noStore: boolean;
  /** `no-cache`: every reuse needs the upstream's word, so never served while revalidating. */
  noCache: boolean;
  /** It names its own lifetime (`max-age`, `s-maxage`), so no default TTL applies. */
  explicit: boolean;
  /** `must-revalidate` (or `proxy-revalidate`): once stale, never used without the upstream's word, unless it says otherwise. */
  mustRevalidate: boolean;
  staleWhileRevalidateS: number | undefined;
  staleIfErrorS: number | undefined;
}

/** A 2xx response as read, for the last-known-good store; the client's stale step takes it off. */
export interface Keepable {
  /** The body's JSON text, credentials already blanked out. */
  text: string;
  hints: StaleHints;
  /** Its `Age` header: undici's cache sets one on every answer it serves, a CDN in front of the PIM may too. */
  ageS: number | undefined;
  /** Epoch ms its call left for the PIM (steps/send.ts), shared by every request that joined it; absent on a replay. */
  sentAt?: number | undefined;
}

/** Why a field got an answer past its freshness: a refresh is under way, or the upstream error's code. */
export interface Staleness {
  ageS: number;
  reason: string;
}

/** One upstream answer: the parsed JSON body of a 2xx response and its freshness. */
export interface Answer {
  body: unknown;
  /** The body's JSON text in UTF-8 bytes: what sending it in a response costs (ByteAccount.send). */
  size: number;
  /** What the parsed body takes in memory, as estimated from its text (rest/answer.ts parsedWeight). */
  weight: number;
  freshness: Freshness;
  /** Set by the reader of a fresh response; absent on answers served again. */
  kept?: Keepable | undefined;
  /** Set when the answer is older than its freshness allows. */
  stale?: Staleness | undefined;
  /** Set when the HTTP cache answered and no call went to the PIM (an `Age` header says nothing: a CDN sends one). */
  cached?: boolean | undefined;
  /** The 2xx status the PIM (or the HTTP cache, replaying) gave it: the client span's `http.response.status_code`. */
  status?: number | undefined;
}

/** What one upstream call needs besides the request itself; every step passes it on. */
export interface CallOptions {
  /** Sent upstream: credentials, request id, trace context. */
  headers: Record<string, string>;
  /** The caller's cancellation; aborting it stops the call. */
  signal?: AbortSignal | undefined;
  /** Epoch ms by which the GraphQL request's upstream work must be done (its budget). */
  deadline: number;
  /** The call's own time once it leaves the queue; unset, PIM_TIMEOUT_MS. The breaker's probe has less. */
  timeoutMs?: number | undefined;
  /** The GraphQL request's upstream bytes; every body read is charged to it. */
  bytes: ByteAccount;
  /** Fair-queue partition of the call; unset, its credential's. The readiness probe has its own. */
  queueKey?: string | undefined;
  /** Who shares the partition's slots fairly with whom: the GraphQL request, or the client's address. */
  queueShare?: string | undefined;
  /**
   * The credential partition of `headers` (createCredentialKey): computed once per GraphQL request and
   * carried with every call, so coalescing, the stores and the queue never hash the credential again.
   */
  partition: string;
  /**
   * Whom a 401 to the call refuses (UpstreamCredentials.identity), computed once per GraphQL request: what the stale
   * step's record of 401s is kept by. Unset (the readiness probe, tests), the partition.
   */
  identity?: string | undefined;
  /** Set by coalescing: the shares of other requests that joined this call while it may still be queued. */
  joined?: JoinedShares | undefined;
  /** Set by the stale step: a kept copy would stand in if this call failed, so no Retry-After is waited out. */
  standIn?: true | undefined;
  /**
   * Set by the stale step when no copy is in memory but one may be in Redis (another instance kept it): asked only
   * when the PIM asks for time, whether a copy would stand in, so no Retry-After is waited out then either.
   */
  findStandIn?: (() => Promise<boolean>) | undefined;
  /**
   * Set by the breaker on its half-open trial: a 429 is not waited out below it (every call waits for the trial's
   * outcome, and the PIM answering is that outcome); the trial's caller waits after it (steps/breaker.ts).
   */
  trial?: true | undefined;
  /**
   * Set by coalescing on a shared call: the breaker calls it once it lets the call through, no longer waiting for a
   * half-open trial's outcome (coalesce.ts: a waiter that asked again stops counting its own wait then).
   */
  onLetThrough?: (() => void) | undefined;
  /** Set by the breaker on its trial caller's re-ask: the attempts the retry step already made of this call. */
  attemptsMade?: number | undefined;
  /**
   * One attempt's record, below the retry step: `sentAt` (performance.now()) once the call leaves the queue for the PIM
   * (send.ts); `counted` once the telemetry step judged whether it was an attempt at the PIM (one never sent is none).
   */
  attempt?: { sentAt?: number | undefined; counted?: boolean | undefined } | undefined;
}

/**
 * The queue shares of the requests that joined one coalesced call. The queue serves a waiting call in
 * the best of its shares, so a request that joins another's queued call waits no longer than its own would.
 */
export interface JoinedShares {
  /**
   * Tells `join` of each share that has joined, then of each that joins later, and `leave` of each whose every joiner
   * has left since (a share lent by a request that is gone would still put the call ahead of others).
   */
  listen(join: (share: string) => void, leave: (share: string) => void): void;
}

/** What a caller hands the client: without a partition (the readiness probe, tests) the client computes it. */
export type CallRequest = Omit<CallOptions, 'partition'> & { partition?: string | undefined };

/** Sends one GET and resolves with its Answer, else rejects with a PimError (or the caller's abort reason). */
export type Send = (request: PimRequest, call: CallOptions) => Promise<Answer>;

/** One step of an upstream call wrapped around the next (see pipeline.ts for their order). */
export type Layer = (next: Send) => Send;

/** What readiness checks and metrics read about the upstream; never written from outside. */
export interface UpstreamStatus {
  readonly breaker: 'closed' | 'open' | 'half-open';
  /**
   * When the PIM last answered a call itself (performance.now(), -Infinity before any): not the HTTP cache, not a fault.
   * Monotonic: on the wall clock, one stepped back kept an old answer recent for as long as the step.
   */
  readonly answeredAt: number;
}
