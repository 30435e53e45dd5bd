import type { Dispatcher } from 'undici';
import type { ByteAccount } from './byte-limits.ts';
import { parseRetryAfter, pimError, pimErrorFromStatus, PimError } from './errors.ts';
import { freshnessOf } from './freshness.ts';
import { readLimitedText } from './guards.ts';
import type { Answer } from './types.ts';

/**
 * Deepest JSON nesting accepted from the upstream. Real catalog bodies nest a few dozen levels;
 * a few thousand would parse, then break serialising the whole GraphQL response.
 */
export const MAX_JSON_DEPTH = 512;

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
  const { statusCode, headers } = response;
  const text = redact(await readLimitedText(response, maxBytes, account), secrets);
  const tooDeep = nestedDeeperThan(text, MAX_JSON_DEPTH);
  const body = tooDeep ? undefined : parseJson(text);
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
  return { body, freshness: freshnessOf(headers['cache-control'], headers['age']) };
}

const REDACTED = '[redacted]';

// Also as JSON would escape it inside a string; a value outside any string breaks the JSON, which is safe.
function redact(text: string, secrets: readonly string[]): string {
  const forms = new Set(
    secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1), secret.replaceAll('/', '\\/')]),
  );
  let result = text;
  // Longest first: a credential inside a longer one must not leave the longer one's rest in clear.
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    if (result.includes(form)) result = result.replaceAll(form, REDACTED);
  }
  return result;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const [OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT] = [0x5b, 0x5d, 0x7b, 0x7d];

// One pass over the text, brackets inside strings skipped; far cheaper than the parse it guards.
function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}
