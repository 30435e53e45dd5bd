import { InvalidArgumentError } from './errors.ts';

/** The version prefix every REST path of the interface starts with. */
export const API_PREFIX = '/pxm/pimapi/v1';

/**
 * The three REST operations: path template (`:name` is a path parameter) and query parameters
 * in the order they are sent. Everything about URLs is derived from this table.
 */
export const operations = {
  searchProducts: {
    path: 'catalogs/:catalogId/products/search',
    query: [
      'classificationId',
      'classificationGroupClassificationId',
      'classificationGroupId',
      'languageId',
      'sorting',
      'page',
      'pageSize',
    ],
  },
  getClassificationGroup: {
    path: 'classifications/:classificationId/groups/:classificationGroupId',
    query: ['levels', 'languageId'],
  },
  listClassificationGroups: {
    path: 'classifications/:classificationId/groups',
    query: ['languageId', 'page', 'pageSize'],
  },
} as const;

export type OperationName = keyof typeof operations;
export type PimArgs = Readonly<Record<string, string | number | null | undefined>>;

/** One upstream GET; `path` (with its query) is also the identity used for deduplication. */
export interface PimRequest {
  operation: OperationName;
  /** The path template, for metrics and traces that must not carry ids. */
  template: string;
  path: string;
}

/** Limits that input checks enforce; they come from the configuration. */
export interface InputLimits {
  maxPageSize: number;
  maxIdLength: number;
}

/**
 * Validates `args` for one operation and builds its request. Throws InvalidArgumentError
 * before anything is sent. Each id is percent-encoded inside its own path segment, so it can
 * never add a segment or a query; query values are encoded so `+` travels as `%2B`.
 */
export function buildRequest(operation: OperationName, args: PimArgs, limits: InputLimits): PimRequest {
  const { template, segments, query } = compiled[operation];
  let path = API_PREFIX;
  for (const segment of segments) {
    const name = segment.startsWith(':') ? segment.slice(1) : undefined;
    path += `/${name === undefined ? segment : encodeComponent(checkArgument(name, args[name], limits))}`;
  }
  let separator = '?';
  for (const name of query) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    path += `${separator}${name}=${encodeComponent(checkArgument(name, value, limits))}`;
    separator = '&';
  }
  return { operation, template, path };
}

/**
 * Percent-encodes a path segment or query value as RFC 3986 does, `!'()*` included. What is built here is
 * the call's identity (dedup, cache key, tags); `encodeURIComponent` alone leaves `'` for undici's URL parser
 * to encode in a query, so the path sent and the path tagged would differ.
 */
export const encodeComponent = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

// Each template split once, not on every call.
const compiled = {} as Record<OperationName, { template: string; segments: string[]; query: readonly string[] }>;
for (const [name, { path, query }] of Object.entries(operations)) {
  compiled[name as OperationName] = { template: `${API_PREFIX}/${path}`, segments: path.split('/'), query };
}

// Length caps keep a hostile value from growing the URL until a proxy answers 414.
// The interface types languageId as a plain string (tags such as "de-DE" or "i-klingon", or a PIM's own numbers):
// any letters, digits, - and _, which need no encoding and carry nothing else into the URL or the logs.
const languagePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,34}$/;
const sortKey = '[+-]?[A-Za-z_][A-Za-z0-9_.]*';
const sortingPattern = new RegExp(`^(?=.{1,256}$)${sortKey}(?:,${sortKey})*$`);
// C0 and C1 controls, DEL included: they have no business in an id and break logs and proxies.
const controlPattern = /[\u0000-\u001f\u007f-\u009f]/;

function checkArgument(name: string, value: string | number | null | undefined, limits: InputLimits): string {
  if (value === undefined || value === null) throw new InvalidArgumentError(name, 'is required');
  switch (name) {
    case 'page':
      return checkInt(name, value, 0, Number.MAX_SAFE_INTEGER, 'must be 0 or greater (pages count from 0)');
    case 'pageSize':
      return checkInt(name, value, 1, limits.maxPageSize, `must be between 1 and ${limits.maxPageSize}`);
    case 'levels':
      return checkInt(name, value, 0, Number.MAX_SAFE_INTEGER, 'must be 0 (all) or greater');
    case 'languageId':
      if (!languagePattern.test(String(value)))
        throw new InvalidArgumentError(name, 'must be at most 35 letters, digits, "-" or "_", e.g. "de" or "de-DE"');
      return String(value);
    case 'sorting':
      if (!sortingPattern.test(String(value)))
        throw new InvalidArgumentError(
          name,
          'must be properties with an optional + or - prefix, e.g. "+productId", at most 256 characters',
        );
      return String(value);
    default:
      return checkId(name, String(value), limits.maxIdLength);
  }
}

function checkInt(name: string, value: string | number, min: number, max: number, rule: string): string {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(name, `${rule}, got ${value}`);
  return String(n);
}

function checkId(name: string, id: string, maxLength: number): string {
  if (id === '' || id === '.' || id === '..') throw new InvalidArgumentError(name, 'must not be empty, "." or ".."');
  // Characters as a person counts them (code points: an emoji is one, though two UTF-16 units). Past twice the
  // bound in units none can be within it: such a string (a megabyte, say) is refused without counting.
  if (id.length > maxLength) {
    const length = id.length > 2 * maxLength ? undefined : [...id].length;
    const got = length === undefined ? '' : `, got ${length}`;
    if (length === undefined || length > maxLength)
      throw new InvalidArgumentError(name, `must be at most ${maxLength} characters${got}`);
  }
  if (controlPattern.test(id)) throw new InvalidArgumentError(name, 'must not contain control characters');
  // A lone UTF-16 surrogate has no UTF-8 form, so it cannot be percent-encoded.
  if (!id.isWellFormed()) throw new InvalidArgumentError(name, 'must be well-formed Unicode');
  return id;
}

/** The probe's classification: an id no PIM has. */
const PROBE_ID = 'readiness-probe';

/** A PIM that takes longer than this to answer the probe (a made-up id, past every cache) is not answering. */
export const PROBE_ANSWER_MS = 2_000;

/**
 * The upstream's probe: one group of a classification no PIM has, which any healthy PIM answers at once (a 404
 * is an answer). Readiness asks it, and so does the breaker before it opens.
 */
export const probeRequest = (limits: InputLimits): PimRequest =>
  // Its made-up id is no caller's input: a MAX_ID_LENGTH shorter than it (valid from 1) must not stop the start.
  buildRequest(
    'listClassificationGroups',
    { classificationId: PROBE_ID, pageSize: 1 },
    {
      ...limits,
      maxIdLength: Math.max(limits.maxIdLength, PROBE_ID.length),
    },
  );
