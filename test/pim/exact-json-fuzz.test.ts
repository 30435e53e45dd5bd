import { expect, it } from 'vitest';
import { parseExact } from '../../src/pim/rest/exact-json.ts';

// exact-json.ts reads numbers with its own scan of the text (JSON.parse's reviver was too slow): checked here against
// that reviver, the plain statement of the rule, on generated bodies full of what a scan can get wrong (escaped quotes
// and backslash runs, digits inside strings and keys, `__proto__`, duplicate keys, exponents, subnormals, whitespace).
const { rawJSON } = JSON as unknown as { rawJSON(text: string): unknown };
const MIN_NORMAL = 2.2250738585072014e-308;
const significant = (source: string) =>
  source
    .replace(/^-/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '').length;
const reviver = (_key: string, value: unknown, context?: { source?: string }) => {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  const digits = significant(context.source);
  const kept = !Number.isFinite(value) || digits > 15 || (Math.abs(value) < MIN_NORMAL && digits > 0);
  return kept ? rawJSON(context.source) : value;
};

// No prototype set through a `__proto__` key (JSON.parse makes it an own property; an assignment would set it).
const { isRawJSON } = JSON as unknown as { isRawJSON(value: unknown): boolean };
const plain = (value: unknown): boolean =>
  typeof value !== 'object' ||
  value === null ||
  isRawJSON(value) ||
  ([Object.prototype, Array.prototype].includes(Object.getPrototypeOf(value) as object) &&
    Object.values(value).every(plain));

function generator(seed: number) {
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
  const integer = () => digits(1 + Math.floor(random() * 25)).replace(/^0+(?=\d)/, '');
  const space = () => pick(['', '', ' ', '\t', '\r\n', ' \n\t ']);
  const number = () =>
    (random() < 0.3 ? '-' : '') +
    pick([
      () => '0',
      integer,
      () => `${integer()}.${digits(1 + Math.floor(random() * 25))}`,
      () => `${integer()}${pick(['e', 'E'])}${pick(['', '+', '-'])}${digits(1 + Math.floor(random() * 4))}`,
      () => pick(['9007199254740993', '1e400', '1e-400', '4.9e-324', '1e-320', '0.0e-999', '1.7976931348623159e308']),
      () => `0.${'0'.repeat(Math.floor(random() * 330))}${digits(1 + Math.floor(random() * 5))}`,
    ])();
  const text = () =>
    `"${Array.from({ length: Math.floor(random() * 6) }, () =>
      pick([
        '\\"',
        '\\\\',
        '\\\\\\"',
        'a',
        ':12345678901234567890',
        ',1e400',
        '[1e-400',
        '\\u0022',
        '\\u005c',
        'é',
        '\\ud83d\\ude00',
      ]),
    ).join('')}"`;
  const key = () => pick(['"a"', '"a"', '"__proto__"', '"12345678901234567890"', '"0"', '"constructor"', text()]);
  const value = (depth: number): string => {
    const r = random();
    if (depth > 5 || r < 0.35) return number();
    if (r < 0.5) return text();
    if (r < 0.55) return pick(['true', 'false', 'null']);
    const items = Array.from({ length: Math.floor(random() * 5) }, () =>
      r < 0.78 ? value(depth + 1) : `${key()}${space()}:${space()}${value(depth + 1)}`,
    );
    const [open, close] = r < 0.78 ? ['[', ']'] : ['{', '}'];
    return `${open}${space()}${items.join(`${space()},${space()}`)}${space()}${close}`;
  };
  return () => `${space()}{"status":200,${space()}"data":${space()}${value(0)}}${space()}`;
}

it('reads 5,000 generated bodies as the reviver does, every number a double cannot hold as its text', () => {
  const body = generator(20261127);
  for (let i = 0; i < 5_000; i++) {
    const text = body();
    const exact = parseExact(text);
    expect(JSON.stringify(exact), text).toBe(JSON.stringify(JSON.parse(text, reviver)));
    expect(plain(exact), text).toBe(true);
  }
});
