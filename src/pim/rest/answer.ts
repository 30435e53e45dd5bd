import type { Dispatcher } from 'undici';
import type { ByteAccount } from './byte-limits.ts';
import {
  isAnswerEnvelope,
  isErrorEnvelope,
  parseRetryAfter,
  pimError,
  pimErrorFromStatus,
  PimError,
} from './errors.ts';
import { markInexact, maybeInexactIn, parseMarked, restoreInexact, type Marked } from './exact-json.ts';
import { ageOf, freshnessOf, NOT_FRESH, staleHintsOf, varyAll } from './freshness.ts';
import { readLimitedText } from './guards.ts';
import type { Answer } from './types.ts';

/**
 * Deepest JSON nesting accepted from the upstream. Real catalog bodies nest a few dozen levels;
 * a few thousand would parse, then break serialising the whole GraphQL response.
 */
const MAX_JSON_DEPTH = 512;

/**
 * Reads one upstream response: the Answer of a 2xx with a JSON body, else a PimError. Every
 * credential value the call sent (`secrets`) is blanked out of the body first, so an upstream that
 * echoes one (in a 404's message, or in data) cannot hand it to a client, a log line or a span.
 */
export async function readAnswer(
  response: Dispatcher.ResponseData,
  maxBytes: number,
  secrets: readonly string[],
  account: ByteAccount,
): Promise<Answer> {
  const { text: read, bytes } = await readLimitedText(response, maxBytes, account);
  try {
    return answerOf(response, read, secrets);
  } catch (error) {
    // The body is thrown away with the failure: its bytes are not held (a replay dropped and asked again would
    // otherwise count twice). What was charged, not the decoded text's length: a body not UTF-8 decodes longer.
    account.refund(bytes);
    throw error;
  }
}

function answerOf({ statusCode, headers }: Dispatcher.ResponseData, read: string, secrets: readonly string[]): Answer {
  const text = redact(withoutBom(read), secrets);
  const { body, containers, raw, tooDeep } = judge(text);
  if (statusCode < 200 || statusCode > 299) {
    const error = pimErrorFromStatus(statusCode, body);
    error.retryAfterMs = parseRetryAfter(headers['retry-after']);
    throw error;
  }
  if (tooDeep) {
    const message = `The catalog service sent JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
    throw new PimError('UPSTREAM_ERROR', message, statusCode);
  }
  if (body === undefined) throw notJson(statusCode, headers['content-encoding']);
  // Every answer is the `{status, meta, data}` envelope: `null`, a bare value or an object with none
  // of its members (a gateway's own JSON) says nothing about the resource.
  if (!isAnswerEnvelope(body)) {
    throw pimError('UPSTREAM_ERROR', new Error('2xx body is JSON but not the envelope object'), statusCode);
  }
  // The envelope's `status` is the PIM's own verdict (UPSTREAM.md: `{status: 404, meta, error}`): an error envelope
  // sent under a 2xx is that error, not the field's data.
  const declared = body['status'];
  if (typeof declared === 'number' && Number.isInteger(declared) && declared >= 400 && declared <= 599) {
    const error = pimErrorFromStatus(declared, body);
    error.retryAfterMs = parseRetryAfter(headers['retry-after']);
    throw error;
  }
  const { 'cache-control': cacheControl, age, vary, expires } = headers;
  // An answer no later request matches (`Vary: *`, RFC 9111 §4.1) is never reused, nor kept to be served stale.
  const reusable = !varyAll(vary);
  const ageS = ageOf(headers, age);
  return {
    body,
    size: sentSize(text),
    weight: weightOf(text.length, containers, raw),
    freshness: reusable ? freshnessOf(headers, age) : NOT_FRESH,
    kept: reusable ? { text, hints: staleHintsOf(cacheControl, expires), ageS } : undefined,
    status: statusCode,
  };
}

// Calls ask for `Accept-Encoding: identity`, which a gateway in between (a CDN, a compressing proxy) may ignore: its
// body is then read as bytes that are no JSON, and the operator is told of the coding rather than of a page.
function notJson(statusCode: number, contentEncoding: string | string[] | undefined): PimError {
  const coding = String(contentEncoding ?? '')
    .split(',')
    .map((one) => one.trim().toLowerCase())
    .findLast((one) => one !== '' && one !== 'identity');
  if (coding === undefined) return pimError('UPSTREAM_ERROR', new Error('2xx body is not JSON'), statusCode);
  // The header is the upstream's: a name of a coding is a token, anything else is named as such, and bounded.
  const name = /^[a-z0-9!#$%&'*+.^_`|~-]{1,32}$/.test(coding) ? coding : 'unknown';
  const error = pimError('UPSTREAM_ERROR', new Error(`2xx body is ${name}-encoded, not identity`), statusCode);
  error.encoding = name;
  return error;
}

// A byte order mark first (some .NET and Java services send one) is not JSON; RFC 8259 §8.1 lets it be ignored.
const withoutBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** A body's JSON as the façade judges it: nested deeper than MAX_JSON_DEPTH, it is no body. */
function judge(text: string) {
  // Numbers a double cannot hold are marked before the one parse (exact-json.ts), in a body the pre-check picks.
  const raw = maybeInexactIn(text);
  const marked = raw === 0 ? undefined : markInexact(text);
  const parsed = parseJson(text, marked);
  const containers = containersIn(text);
  const tooDeep = parsed !== undefined && containers > MAX_JSON_DEPTH && nestedDeeperThan(parsed, MAX_JSON_DEPTH);
  const body = tooDeep || parsed === undefined || !marked ? parsed : restoreInexact(parsed, marked, text);
  return { body: tooDeep ? undefined : body, containers, raw, tooDeep };
}

/** Whether an upstream body is the PIM's envelope, judged as readAnswer judges it. */
export const isEnvelopeText = (text: string): boolean => isAnswerEnvelope(judge(withoutBom(text)).body);

/** Whether a 404's body is the PIM's error envelope, as pimErrorFromStatus judges it (the HTTP cache keeps 404s by it). */
export const isErrorEnvelopeText = (text: string): boolean => isErrorEnvelope(judge(withoutBom(text)).body, 404);

const REDACTED = '[redacted]';

// Also as JSON would escape it inside a string; a value outside any string breaks the JSON, which is safe.
function redact(text: string, secrets: readonly string[]): string {
  let result = secrets.length > 0 ? plainAscii(text) : text;
  for (const form of formsOf(secrets)) {
    if (result.includes(form)) result = result.replaceAll(form, REDACTED);
  }
  return result;
}

// Every call of a credential sends the same secrets: the forms of the last ones are kept, not worked out per answer.
let lastSecrets: readonly string[] = [];
let lastForms: readonly string[] = [];
function formsOf(secrets: readonly string[]): readonly string[] {
  if (secrets.length === lastSecrets.length && secrets.every((secret, i) => secret === lastSecrets[i]))
    return lastForms;
  const forms = new Set(secrets.flatMap(formsOfOne));
  // Longest first: a credential inside a longer one must not leave the longer one's rest in clear.
  [lastSecrets, lastForms] = [[...secrets], [...forms].sort((a, b) => b.length - a.length)];
  return lastForms;
}

// As JSON escapes it, and as each common way of writing it into a URL or form does (a service that echoes the request
// it got), in either case of hex.
function formsOfOne(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const percent = PERCENT_ENCODINGS.flatMap(([kept, space]) => {
    let encoded = '';
    for (const byte of bytes) {
      const char = String.fromCharCode(byte);
      if (byte === 0x20) encoded += space;
      else encoded += byte < 0x80 && kept.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
    return [encoded, encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())];
  });
  const forms = [secret, JSON.stringify(secret).slice(1, -1), ...percent];
  // Each also with `/` escaped, as PHP's json_encode writes it (Python's quote leaves it as it is in a URL).
  return [...forms, ...forms.map((form) => form.replaceAll('/', '\\/'))];
}

// What each leaves as it is (the rest percent-encoded), and how it writes a space.
const PERCENT_ENCODINGS: ReadonlyArray<readonly [kept: RegExp, space: string]> = [
  // JavaScript's encodeURIComponent.
  [/[A-Za-z0-9\-_.!~*'()]/, '%20'],
  // application/x-www-form-urlencoded: URLSearchParams, Java's URLEncoder.
  [/[A-Za-z0-9\-_.*]/, '+'],
  // Go's QueryEscape, Python's quote_plus.
  [/[A-Za-z0-9\-_.~]/, '+'],
  // RFC 3986's unreserved characters alone.
  [/[A-Za-z0-9\-_.~]/, '%20'],
  // Python's quote.
  [/[A-Za-z0-9\-_.~/]/, '%20'],
  // .NET's WebUtility.UrlEncode.
  [/[A-Za-z0-9\-_.!*()]/, '+'],
  // PHP's urlencode.
  [/[A-Za-z0-9\-_.]/, '+'],
];

// `\u0020`-`\u007f` escapes, and escaped backslashes taken whole (left to right), so `\\u0041` is never read as
// one; every other escape (`\"`, `\n`, `\u00e9`) is passed over by the native scan without a callback.
const ESCAPE = /\\(?:u00([2-7][0-9a-fA-F])|\\)/g;

/**
 * The same JSON with `\u0020`-`\u007e` escapes (Gson writes `=` as `\u003d`) written as the characters
 * they stand for, but for `"` and `\`: a credential echoed that way is then found by its plain form.
 */
function plainAscii(text: string): string {
  if (!text.includes('\\u00')) return text;
  return text.replace(ESCAPE, (escape, hex: string | undefined) => {
    const code = hex === undefined ? 0 : parseInt(hex, 16);
    return code >= 0x20 && code < 0x7f && code !== 0x22 && code !== 0x5c ? String.fromCharCode(code) : escape;
  });
}

function parseJson(text: string, marked: Marked | undefined): unknown {
  try {
    return marked ? parseMarked(marked) : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What a parsed object or array takes in memory beyond its JSON text (V8: 32-56 bytes each, with its
 * slot in the parent). Counted, a body of empty arrays weighs what it parses into (14 MB for 1 MiB)
 * rather than its text: the store of parsed answers is bounded by this weight.
 */
const CONTAINER_BYTES = 64;

/** What sending this JSON text in a response costs, in UTF-8 bytes (not UTF-16 units: `é` is two). */
export const sentSize = (text: string): number => Buffer.byteLength(text);

/** The memory a body of this JSON text takes once parsed, as the store of parsed answers counts it. */
export const parsedWeight = (text: string): number => weightOf(text.length, containersIn(text), maybeInexactIn(text));
// A number kept as its text (JSON.rawJSON: a frozen object with a string of its own, ~70-100 bytes of heap for the
// 16 or more characters the text counts) weighs as much again: counted by the pre-check's matches, a bound on them.
const RAW_NUMBER_BYTES = 96;
const weightOf = (length: number, containers: number, raw: number) =>
  length + CONTAINER_BYTES * containers + RAW_NUMBER_BYTES * raw;

/**
 * How many `{` and `[` the text has (those inside strings too): at least as many as the objects and
 * arrays it parses into, and no body can nest deeper. The native indexOf keeps it cheap (64 products:
 * ~1 µs, against ~80 µs for a scan of every character).
 */
function containersIn(text: string): number {
  let opens = 0;
  for (const bracket of ['{', '[']) {
    for (let i = text.indexOf(bracket); i !== -1; i = text.indexOf(bracket, i + 1)) opens++;
  }
  return opens;
}

// Walks the parsed value without recursion (that is what a deep value would overflow), visiting only
// objects and arrays, so the cost follows the number of containers rather than the bytes.
function nestedDeeperThan(root: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[root, 1]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (depth > max) return true;
    for (const child of Object.values(value as object)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}
