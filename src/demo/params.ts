import { BadRequestError, type Paging } from './envelope.ts';

/** Page size used when the caller sends none; the interface does not name one. */
const DEFAULT_PAGE_SIZE = 10;

/**
 * Parses an optional decimal integer parameter from `min` to `max` (the interface sets no maximum for paging; its
 * `levels` is an int32), or throws a 400.
 */
export function intParam(query: URLSearchParams, name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  const raw = query.get(name);
  if (raw === null) return undefined;
  // Strict digits only: "1.5", "1e2", " 3" and "" are client errors, not silently coerced.
  if (!/^\d{1,16}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new BadRequestError(`Parameter ${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return Number(raw);
}

/** Reads `page` (from 0) and `pageSize` (>= 1, default 10). */
export function pagingParams(query: URLSearchParams): { page: number; pageSize: number } {
  return { page: intParam(query, 'page', 0) ?? 0, pageSize: intParam(query, 'pageSize', 1) ?? DEFAULT_PAGE_SIZE };
}

/** One page of `items` with its paging block, or undefined when the page holds nothing. */
export function paginate<T>(items: T[], page: number, pageSize: number): { slice: T[]; paging: Paging } | undefined {
  const slice = items.slice(page * pageSize, (page + 1) * pageSize);
  if (slice.length === 0) return undefined;
  const paging = {
    per_page: pageSize,
    page,
    total_pages: Math.ceil(items.length / pageSize),
    total_items: items.length,
  };
  return { slice, paging };
}
