/** One JSON part of a `multipart/mixed` incremental response (@defer, @stream). */
export interface IncrementalPart {
  data?: any;
  errors?: any[];
  incremental?: any[];
  hasNext?: boolean;
  extensions?: { stale?: unknown[] };
}

/** The JSON parts of a `multipart/mixed` response body, in order. */
export const partsOf = (text: string): IncrementalPart[] =>
  text
    .split(/\r\n--[^\r\n]*\r\n/)
    .map((part) => part.slice(part.indexOf('\r\n\r\n') + 4).trim())
    .filter((part) => part.startsWith('{'))
    .map((part) => JSON.parse(part) as IncrementalPart);
