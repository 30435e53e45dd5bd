/**
 * JSON read exactly: a number a double cannot hold (an integer past 2^53, a decimal of more than 15 significant digits,
 * one that overflows to Infinity or underflows to 0) is kept as its own text (JSON.rawJSON), which JSON.stringify
 * writes back digit for digit, so a field's value is the service's body unchanged, a Java `long` id included.
 *
 * Not JSON.parse's reviver: called for every value of the body, it took 20 to 80 times JSON.parse's time on a body
 * dense with numbers (a 2 MB page held the event loop a second). A body the pre-check picks is scanned once for its
 * numbers outside strings; those to keep are written as strings no body holds (a control character the body does not
 * write, NUL first, and the number's index: only a body writing every such character is read with the reviver), the
 * text is parsed once, and the walk puts their text back.
 */

// Node 24's JSON.rawJSON (not yet in TypeScript's lib): JSON.stringify writes its text as it is.
const { rawJSON } = JSON as unknown as { rawJSON(text: string): unknown };

/** A body's text with the numbers to keep written as markers, and those numbers' text in order. */
export interface Marked {
  text: string;
  raws: string[];
  /** The character each marker starts with (none of the body's strings holds it). */
  mark: string;
  /**
   * The text as it is, to be read with JSON.parse's reviver (slower, but holding no marked copy): it writes every
   * control character a short marker could start with, so one could be one of its strings, and a nonce's (some 50
   * characters a number) made a body of short such numbers at the default limit more than the heap the image runs with.
   */
  revive?: true;
}

/** JSON.parse of a marked text (throws when it is no JSON). */
export const parseMarked = ({ text, revive }: Marked): unknown =>
  revive ? (JSON.parse as Reviving)(text, reviver) : JSON.parse(text);
type Reviving = (
  text: string,
  reviver: (key: string, value: unknown, context?: { source?: string }) => unknown,
) => unknown;
const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && context?.source !== undefined && inexact(value, context.source)
    ? rawJSON(context.source)
    : value;

/** JSON.parse, exactly (the text is known to be JSON: a kept copy). */
export function parseExact(text: string): unknown {
  const marked = MAYBE_INEXACT.test(text) ? markInexact(text) : undefined;
  const body = marked ? parseMarked(marked) : (JSON.parse(text) as unknown);
  return marked ? restoreInexact(body, marked, text) : body;
}

/**
 * The text with each number a double cannot hold written as a marker; undefined when it holds none, or is no JSON (a
 * string not closed, a run of digits no number: the text is left as it is, for JSON.parse to refuse).
 */
export function markInexact(text: string): Marked | undefined {
  const raws: string[] = [];
  // The parts of the marked text, joined once: a string added to per number (1.4 million `1e400` in a body at the
  // default limit) held a tree of concatenations several times the body, past the heap the image runs with.
  const parts: string[] = [];
  let copied = 0;
  // A control character no string of this body holds (JSON writes one only as its `\u00XX` escape): a marker of a few
  // characters, as short as the shortest such number (`1e400`). A body that writes them all is read with the reviver.
  // (Only NUL, as before, sent every body holding one `\u0000`, a C string imported with its end, to the reviver: an
  // 8 MiB page held the event loop 4.6 s.)
  const mark = MARKS.find((escape) => !text.includes(escape));
  const revive = mark === undefined;
  const opened = mark === undefined ? '' : `"${mark}`;
  const length = text.length;
  for (let i = 0; i < length;) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, one not escaped (an even run of backslashes before it).
      let end = text.indexOf('"', i + 1);
      for (;;) {
        if (end === -1) return undefined;
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
      // Not a JSON number (`1.2.3…`, `012…`): a marker would make JSON of a body that is none.
      if (!JSON_NUMBER.test(source)) return undefined;
      if (inexact(Number(source), source)) {
        // No marker: JSON.parse of the text as it is decides whether it is JSON.
        if (revive) return { text, raws: [], mark: '', revive };
        parts.push(text.slice(copied, i), `${opened}${raws.length}"`);
        copied = end;
        raws.push(source);
      }
    }
    i = end;
  }
  if (raws.length === 0) return undefined;
  parts.push(text.slice(copied));
  return { text: parts.join(''), raws, mark: JSON.parse(`"${mark}"`) as string };
}

/**
 * The marked text's parsed body with each marker replaced by its number's text (JSON.rawJSON), in place; undefined
 * when the `text` marked was no JSON after all.
 */
export function restoreInexact(body: unknown, { raws, mark }: Marked, text: string): unknown {
  // Walked without recursion (the stack need not hold the body's depth); stops once all are back.
  let left = raws.length;
  const pending: object[] = typeof body === 'object' && body !== null ? [body] : [];
  const raw = (marker: string) => rawJSON(raws[Number(marker.slice(mark.length))]!);
  const put = (container: Record<string | number, unknown>, key: string | number) => {
    const value = container[key];
    if (typeof value === 'object' && value !== null) pending.push(value);
    // Assigned as any other, an own `__proto__` key (JSON.parse makes one) shadows the prototype's setter.
    else if (typeof value === 'string' && value.startsWith(mark)) {
      container[key] = raw(value);
      left--;
    }
  };
  while (left > 0 && pending.length > 0) {
    const container = pending.pop() as Record<string | number, unknown>;
    // An array by index: Object.keys (or its iterator) made a string of every index, then looked each up by it (5 times
    // JSON.parse on a page of small values).
    if (Array.isArray(container)) for (let i = 0; i < container.length; i++) put(container, i);
    else for (const key of Object.keys(container)) put(container, key);
  }
  // A marker left: one where a key goes (`{12345678901234567890: 1}` is no JSON, its marked text is), or a value a
  // later duplicate key replaced. The text itself decides.
  return left === 0 || isJson(text) ? body : undefined;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// What such a number's marker starts with, as the text writes it: a control character, which a body not writing its
// escape cannot hold (a raw one in a string is no JSON, marked or not). Those whose escape has digits only (`\u000b`
// has a `\u000B` too; `\n` another form), tried in order: made once, JSON.stringify per number took half the scan.
const MARKS = [...Array(8).keys(), ...Array.from({ length: 10 }, (_, i) => 0x10 + i)].map((code) =>
  JSON.stringify(String.fromCharCode(code)).slice(1, -1),
);

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

// A value (after `:`, `,` or `[`) starting with 16 digits (dots among them) or with a 3-digit exponent. Anchored on
// the punctuation, which is rarer than digits: a scan of a digit-heavy megabyte takes about half its JSON.parse.
const MAYBE_INEXACT = /[:,[]\s*-?(?:\d[\d.]{15}|[\d.]+[eE][+-]?\d{3})/;

/** How many values the pre-check takes for numbers a double may not hold (at least those kept as their text). */
export function maybeInexactIn(text: string): number {
  let count = 0;
  ALL_MAYBE_INEXACT.lastIndex = 0;
  while (ALL_MAYBE_INEXACT.exec(text) !== null) count++;
  return count;
}
// Made once (not per body): a global expression's position is reset before each scan, which runs to its end at once.
const ALL_MAYBE_INEXACT = new RegExp(MAYBE_INEXACT.source, 'g');

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
