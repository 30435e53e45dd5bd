import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { ByteAccount } from './byte-limits.ts';
import { isEnvelope, parseRetryAfter, pimError, pimErrorFromStatus, PimError } from './errors.ts';
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
  if (body === undefined) throw pimError('UPSTREAM_ERROR', new Error('2xx body is not JSON'), statusCode);
  // Every answer is the `{status, meta, data}` envelope: `null` or a bare value says nothing about the resource.
  if (!isEnvelope(body)) {
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
  };
}

// A byte order mark first (some .NET and Java services send one) is not JSON; RFC 8259 §8.1 lets it be ignored.
const withoutBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** A body's JSON as the façade judges it: nested deeper than MAX_JSON_DEPTH, it is no body. */
function judge(text: string) {
  const parsed = parseJson(text);
  const containers = containersIn(text);
  const tooDeep = parsed !== undefined && containers > MAX_JSON_DEPTH && nestedDeeperThan(parsed, MAX_JSON_DEPTH);
  // Read again, exactly, only once known to be JSON within the depth.
  const raw = tooDeep || parsed === undefined ? 0 : maybeInexactIn(text);
  const body = raw === 0 ? parsed : exactly(text, parsed);
  return { body: tooDeep ? undefined : body, containers, raw, tooDeep };
}

/** Whether an upstream body is the PIM's envelope, judged as readAnswer judges it (the HTTP cache keeps 404s by it). */
export const isEnvelopeText = (text: string): boolean => isEnvelope(judge(withoutBom(text)).body);

const REDACTED = '[redacted]';

// Also as JSON would escape it inside a string; a value outside any string breaks the JSON, which is safe.
function redact(text: string, secrets: readonly string[]): string {
  const forms = new Set(
    secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1), secret.replaceAll('/', '\\/')]),
  );
  let result = secrets.length > 0 ? plainAscii(text) : text;
  // Longest first: a credential inside a longer one must not leave the longer one's rest in clear.
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    if (result.includes(form)) result = result.replaceAll(form, REDACTED);
  }
  return result;
}

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

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// Node 24's JSON.rawJSON (not yet in TypeScript's lib): JSON.stringify writes its text as it is.
const { rawJSON } = JSON as unknown as { rawJSON(text: string): unknown };

/**
 * JSON.parse, but a number a double cannot hold exactly (an integer past 2^53, a decimal of more than 15 significant
 * digits, one that overflows to Infinity or underflows to 0) is kept as its own text, which JSON.stringify writes back
 * digit for digit: the field's value is the service's body unchanged, a Java `long` id included. Only a body with a
 * number of 16 digits (dots among them counted) or a 3-digit exponent pays for a scan of its numbers.
 */
export const parseExact = (text: string): unknown =>
  MAYBE_INEXACT.test(text) ? exactly(text, JSON.parse(text)) : JSON.parse(text);

// Not JSON.parse's reviver: called for every value of the body, it took 20 to 80 times JSON.parse's time on a body
// dense with numbers (a 2 MB page held the event loop a second). The numbers outside strings are found by one scan of
// the text; the few a double cannot hold are written as strings no body holds (a per-process nonce), parsed, and
// replaced by their text. `parsed`: the text as JSON.parse reads it, returned when it holds no such number.
function exactly(text: string, parsed: unknown): unknown {
  const raws: string[] = [];
  let sent = '';
  let copied = 0;
  const length = text.length;
  for (let i = 0; i < length;) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, one not escaped (an even run of backslashes before it).
      let end = text.indexOf('"', i + 1);
      for (;;) {
        if (end === -1) return parsed;
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      i = end + 1;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) {
      i++;
      continue;
    }
    // A number: digits, `.`, `e`, `E`, `+` and `-` up to the next other character.
    let end = i + 1;
    let exponent = false;
    for (; end < length; end++) {
      const d = text.charCodeAt(end);
      if (d === 0x65 || d === 0x45) exponent = true;
      else if ((d < 0x30 || d > 0x39) && d !== 0x2e && d !== 0x2b && d !== 0x2d) break;
    }
    // Fewer than 16 characters and no exponent: at most 15 digits, a normal double (or 0), exact.
    if (end - i >= 16 || exponent) {
      const source = text.slice(i, end);
      if (inexact(Number(source), source)) {
        sent += `${text.slice(copied, i)}${RAW_MARK_OPENED}${raws.length}"`;
        copied = end;
        raws.push(source);
      }
    }
    i = end;
  }
  if (raws.length === 0) return parsed;
  const body = JSON.parse(sent + text.slice(copied)) as unknown;
  // Walked without recursion (the body is within MAX_JSON_DEPTH, but the stack need not be); stops once all are back.
  let left = raws.length;
  const pending: object[] = typeof body === 'object' && body !== null ? [body] : [];
  while (left > 0 && pending.length > 0) {
    const container = pending.pop()!;
    // An array by index: Object.keys would make a string of every index, then look each up by it (5 times JSON.parse
    // on a page of small values).
    if (Array.isArray(container)) {
      for (let j = 0; j < container.length; j++) {
        const value: unknown = container[j];
        if (typeof value === 'object' && value !== null) pending.push(value);
        else if (typeof value === 'string' && value.startsWith(RAW_MARK)) {
          container[j] = rawJSON(raws[Number(value.slice(RAW_MARK.length))]!);
          left--;
        }
      }
      continue;
    }
    for (const key of Object.keys(container)) {
      const value = (container as Record<string, unknown>)[key];
      if (typeof value === 'object' && value !== null) pending.push(value);
      else if (typeof value === 'string' && value.startsWith(RAW_MARK)) {
        // defineProperty: a key `__proto__` (an own property, as JSON.parse makes it) is not the prototype's setter.
        const raw = rawJSON(raws[Number(value.slice(RAW_MARK.length))]!);
        Object.defineProperty(container, key, { value: raw, writable: true, enumerable: true, configurable: true });
        left--;
      }
    }
  }
  return body;
}

// What stands for such a number while the text is parsed: a string no upstream body can know to hold.
const RAW_MARK = `\u0000${randomUUID()}#`;
// Its JSON string but the closing quote, made once: JSON.stringify per number took half the scan of a page of ids.
const RAW_MARK_OPENED = JSON.stringify(RAW_MARK).slice(0, -1);

// A value (after `:`, `,` or `[`) starting with 16 digits (dots among them) or with a 3-digit exponent. Anchored on
// the punctuation, which is rarer than digits: a scan of a digit-heavy megabyte takes about half its JSON.parse.
const MAYBE_INEXACT = /[:,[]\s*-?(?:\d[\d.]{15}|[\d.]+[eE][+-]?\d{3})/;

const MIN_NORMAL = 2.2250738585072014e-308;

function inexact(value: number, source: string): boolean {
  if (!Number.isFinite(value)) return true;
  // The mantissa's significant digits: 15 always survive a double (DBL_DIG).
  const digits = source
    .replace(/^-/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  // Below 2^-1022 (subnormal) a double holds fewer digits than that, down to one: such a value, or one that became 0, is kept.
  return digits.length > 15 || (Math.abs(value) < MIN_NORMAL && digits.length > 0);
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

/** How many values the pre-check takes for numbers a double may not hold (at least those kept as their text). */
function maybeInexactIn(text: string): number {
  let count = 0;
  ALL_MAYBE_INEXACT.lastIndex = 0;
  while (ALL_MAYBE_INEXACT.exec(text) !== null) count++;
  return count;
}
// Made once (not per body): a global expression's position is reset before each scan, which runs to its end at once.
const ALL_MAYBE_INEXACT = new RegExp(MAYBE_INEXACT.source, 'g');

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
