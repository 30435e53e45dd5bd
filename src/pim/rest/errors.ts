/**
 * Why a PIM call failed, as a stable code. These strings are the public error contract:
 * src/errors.ts copies them into `extensions.code` unchanged.
 */
export type PimErrorCode =
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'UPSTREAM_BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'SERVER_CREDENTIALS_REJECTED'
  | 'FORBIDDEN'
  | 'UPSTREAM_RATE_LIMITED'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_UNAVAILABLE'
  | 'BUDGET_EXCEEDED'
  | 'UPSTREAM_TOO_LARGE';

/** Base class of every failure this folder reports; `message` is safe to show to clients. */
export class PimError extends Error {
  override name = 'PimError';
  /** How long the upstream asked us to wait (Retry-After), in ms; only the retry step reads it. */
  retryAfterMs: number | undefined;
  readonly code: PimErrorCode;
  /** The upstream HTTP status, when the failure came from a response. */
  readonly status: number | undefined;
  /** The PIM's own words on why it refused a request (400, 422): cleaned, so safe to pass on. */
  reason: string | undefined;
  /**
   * The wait before a retry that the call could not make (a Retry-After or backoff past its deadline, or a kept copy
   * answering at once): no verdict on another caller of the same call that has time for it (steps/coalesce.ts).
   */
  unwaitedMs: number | undefined;
  /** With `unwaitedMs`, from the retry step: the attempts it had made of the call (the breaker's re-ask continues). */
  attemptsMade: number | undefined;
  /** Set when the HTTP cache gave this answer (a kept 404, say) and no call went to the PIM. */
  cached: boolean | undefined;
  /** UPSTREAM_TOO_LARGE of one request's own byte limit (its other reads counted): no verdict on another request. */
  requestLimit: boolean | undefined;
  /** UPSTREAM_ERROR of a body over PIM_MAX_BODY_BYTES, cut unread: nothing is known of what it held. */
  oversized: boolean | undefined;
  /** UPSTREAM_ERROR of a 2xx sent in a content coding (gzip, br) although the call asked for identity: its name. */
  encoding: string | undefined;
  /**
   * A 404 whose body is not the PIM's JSON envelope (an HTML page, empty): a proxy or ingress in front of the PIM has no route
   * for it (misrouted, the PIM away mid-deploy), so no verdict of the PIM's. The service's own 404 is its JSON envelope.
   */
  proxied: boolean | undefined;
  /**
   * A non-2xx status whose body is not the PIM's JSON envelope (an HTML or empty page): a proxy or gateway in front of the PIM may
   * send it before any key is checked (nginx's 400 for a header past its buffers), so no word of the PIM's on the key.
   */
  page: boolean | undefined;
  constructor(code: PimErrorCode, message: string, status?: number, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.status = status;
  }
}

/** An argument the REST interface cannot accept; raised before any request is sent. */
export class InvalidArgumentError extends PimError {
  override name = 'InvalidArgumentError';
  readonly argument: string;
  /** What the value broke, without the argument's name. */
  readonly rule: string;
  constructor(argument: string, rule: string) {
    super('BAD_USER_INPUT', `Invalid argument "${argument}": ${rule}`);
    this.argument = argument;
    this.rule = rule;
  }
}

const codeByStatus: Record<number, PimErrorCode> = {
  400: 'UPSTREAM_BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  422: 'UPSTREAM_BAD_REQUEST',
  429: 'UPSTREAM_RATE_LIMITED',
};

const messageByCode: Record<PimErrorCode, string> = {
  BAD_USER_INPUT: 'Invalid argument',
  NOT_FOUND: 'Not found',
  UPSTREAM_BAD_REQUEST: 'The catalog service rejected the request',
  UNAUTHENTICATED: 'The catalog service requires valid credentials',
  SERVER_CREDENTIALS_REJECTED:
    "The catalog service refused this service's own credentials: a server configuration fault, not the caller's",
  FORBIDDEN: 'The credentials may not read this resource',
  UPSTREAM_RATE_LIMITED: 'The catalog service is rate limiting requests',
  UPSTREAM_ERROR: 'The catalog service failed',
  UPSTREAM_TIMEOUT: 'The catalog service did not answer in time',
  UPSTREAM_UNAVAILABLE: 'The catalog service is unreachable',
  UPSTREAM_TOO_LARGE: 'The catalog answers are too large to hold',
  BUDGET_EXCEEDED: "The request's time for catalog calls ran out; ask for fewer fields or retry later",
};

/**
 * Turns a non-2xx upstream answer into a PimError. Only the service's own `error` text of a 404
 * (what is missing) and of a 400 or 422 (why it refused) is kept; other bodies may hold internals.
 */
/** A parsed body that can be the PIM's `{status, meta, …}` envelope: a JSON object. */
const isEnvelope = (body: unknown): body is Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body);

// A success is the envelope `{status, meta, data}` (UPSTREAM.md): an object with none of them (a gateway's
// `{"message": "Service in maintenance"}`, `{}`) is a page, not the field's data.
export const isAnswerEnvelope = (body: unknown): body is Record<string, unknown> =>
  isEnvelope(body) && ('status' in body || 'meta' in body || 'data' in body);

// Members of a framework's own error JSON that the PIM's envelope never has.
const FRAMEWORK_MEMBERS = ['path', 'timestamp', 'type', 'title', 'detail', 'instance'];
// The PIM's error body is its envelope, `{status, meta, error}` (UPSTREAM.md): a gateway's own JSON (Kong's
// `{"message": "no Route matched …"}`) is a page too, and so is a framework's 404 for a route it lacks, without `meta`:
// Spring's `{timestamp, status, error, path}`, RFC 9457's `{type, title, status, detail, instance}`. The route is
// missing, not the ids asked for.
export const isErrorEnvelope = (body: unknown, status: number): body is Record<string, unknown> =>
  isEnvelope(body) &&
  ('status' in body || 'error' in body || 'meta' in body) &&
  !(status === 404 && !('meta' in body) && FRAMEWORK_MEMBERS.some((member) => member in body));

export function pimErrorFromStatus(status: number, body: unknown): PimError {
  const error = errorFromStatus(status, body);
  if (!isErrorEnvelope(body, status)) error.page = true;
  return error;
}

function errorFromStatus(status: number, body: unknown): PimError {
  if (status === 404 && !isErrorEnvelope(body, status)) {
    const error = new PimError(
      'UPSTREAM_ERROR',
      `${messageByCode.UPSTREAM_ERROR} (HTTP 404 without its answer)`,
      status,
    );
    error.proxied = true;
    return error;
  }
  const code = codeByStatus[status] ?? 'UPSTREAM_ERROR';
  const generic = `${messageByCode[code]} (HTTP ${status})`;
  if (code === 'NOT_FOUND') return new PimError(code, serviceErrorText(body) ?? generic, status);
  const error = new PimError(code, generic, status);
  if (code === 'UPSTREAM_BAD_REQUEST') error.reason = serviceErrorText(body);
  return error;
}

/** A PimError for a failure without a usable response (timeouts, network, bad bodies). */
export function pimError(code: PimErrorCode, cause?: unknown, status?: number): PimError {
  return new PimError(code, messageByCode[code], status, { cause });
}

const MAX_REASON_LENGTH = 300;

/** The body's `error` text on one line (control characters become spaces), cut to a bounded length. */
function serviceErrorText(body: unknown): string | undefined {
  const text = (body as { error?: unknown } | null)?.error;
  if (typeof text !== 'string') return undefined;
  const line = text.replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ').trim();
  if (line.length === 0) return undefined;
  return line.length <= MAX_REASON_LENGTH ? line : `${line.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

/**
 * The one rule for "the upstream answered": any 2xx to 4xx status is its own verdict on one
 * request and proves it is up. Only 5xx statuses, a proxy's 404 page and failures without a response say it is unwell.
 */
export function isUpstreamAnswer({ status, proxied }: Pick<PimError, 'status' | 'proxied'>): boolean {
  return status !== undefined && status >= 200 && status < 500 && proxied !== true;
}

/** Milliseconds from a Retry-After value (seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1_000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The request's budget (GRAPHQL_BUDGET_MS) ran out before its call was answered. */
export const budgetSpent = (): PimError => pimError('BUDGET_EXCEEDED', new Error('the request budget ran out'));

/** The server's shutdown grace is about to end: what still waits for the PIM ends now, so that it is answered. */
export const shuttingDown = (): PimError => pimError('BUDGET_EXCEEDED', new Error('the server is shutting down'));

/**
 * A 2xx whose body could not be read as the JSON envelope (a gateway's page, a body cut short): the PIM did not answer
 * the request at all. Not a body too large to read, of which nothing is known.
 */
export const isUnreadableAnswer = (error: PimError): boolean =>
  error.code === 'UPSTREAM_ERROR' &&
  error.oversized !== true &&
  error.status !== undefined &&
  error.status >= 200 &&
  error.status < 300;
