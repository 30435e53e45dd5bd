import { getOperationAST, type DocumentNode, type GraphQLFormattedError } from 'graphql';

/** A response or one part of a multipart response; deferred parts nest under `incremental`. */
export type ResultPart = { errors?: readonly GraphQLFormattedError[]; incremental?: readonly ResultPart[] };

const none: GraphQLFormattedError[] = [];

// Results (or parts) whose text was refused as it was serialized (sent-bytes.ts): the errors sent in their place.
const refused = new WeakMap<object, readonly GraphQLFormattedError[]>();

/** `part` went out as `errors` alone: its own data and errors were never sent. */
export const sentInstead = (part: object, errors: readonly GraphQLFormattedError[]) => void refused.set(part, errors);

/** Every error a response (part) carries, deferred parts included; once serialized, those it was sent with. */
export function errorsOf(part: ResultPart): readonly GraphQLFormattedError[] {
  const instead = refused.get(part);
  if (instead) return instead;
  // Most responses have no errors: nothing to allocate for them.
  if (part.incremental === undefined) return part.errors ?? none;
  return [...(part.errors ?? []), ...part.incremental.flatMap(errorsOf)];
}

/**
 * `part` (a result or a stream's part), whose serialization then calls `sent` with it: plugins/sent-bytes.ts may have
 * sent an UPSTREAM_TOO_LARGE error in its place, which `errorsOf` then gives. One without a `stringify` of its own was
 * not counted there (no request state): `sent` at once.
 */
export function whenSent<P extends object>(part: P, sent: (part: P) => void): P {
  const serialized = part as P & { stringify?: (out: never) => string };
  const own = serialized.stringify;
  if (!own) return (sent(part), part);
  serialized.stringify = (out: never) => {
    const text = own(out);
    sent(part);
    return text;
  };
  return part;
}

/**
 * Whether `response`'s body is streamed (multipart or event stream: @defer/@stream parts, or a whole result a client
 * asking for those alone gets so), which serializes its result as it is read, after the response hooks.
 */
export const serializedLater = (response: Response): boolean =>
  /^(multipart\/|text\/event-stream)/i.test(response.headers.get('content-type') ?? '');

export interface OperationLabel {
  type: string;
  /** `anonymous` for an operation without a name, which is then not `named`. */
  name: string;
  named: boolean;
}

// Yoga's parser cache hands out one document per query text, so repeated operations hit here.
const described = new WeakMap<DocumentNode, Map<string | null | undefined, OperationLabel>>();

/** Type and name of the operation being executed, as metric labels and span attributes. */
export function describeOperation(document: DocumentNode, operationName?: string | null): OperationLabel {
  let byName = described.get(document);
  if (!byName) described.set(document, (byName = new Map()));
  let label = byName.get(operationName);
  if (!label) {
    const operation = getOperationAST(document, operationName);
    const name = operation?.name?.value;
    label = { type: operation?.operation ?? 'unknown', name: name ?? 'anonymous', named: name !== undefined };
    // Only names the document defines are kept, so a client's invented names cannot grow the map.
    if (operation) byName.set(operationName, label);
  }
  return label;
}

/** Distinct client-chosen operation names kept as label values; later ones count as `other`. */
const maxOperationNames = 100;
/**
 * Longer names count as `other`: real operation names are short identifiers, and with 100 names
 * at this length a scrape stays near 220 KB, where 60 KB names made it 90 MB.
 */
const maxOperationNameLength = 48;

/**
 * Maps an operation name to a label value (a metric label, a span name), so clients cannot grow a scrape or a
 * tracing backend's span names without bound: the `allowed` names (trusted documents), else the first ones seen.
 */
export function createOperationLabel(allowed: ReadonlySet<string> | undefined) {
  if (allowed) return (name: string) => (allowed.has(name) ? name : 'other');
  const names = new Set<string>();
  return (name: string) => {
    if (names.has(name)) return name;
    if (names.size >= maxOperationNames || name.length > maxOperationNameLength) return 'other';
    names.add(name);
    return name;
  };
}

/** What a client chose (a path, an operation name), cut where it is written down: a body or head may hold tens of KB of it. */
export const clip = (text: string) => (text.length > 256 ? `${text.slice(0, 256)}…` : text);

/**
 * Runs `end` once, when a stream's last part is out or its reader cancels it, or when its client leaves: a stream
 * whose client left before its first part was sent is never read nor cancelled, so its onEnd never comes.
 */
export function untilStreamEnds(request: Request, end: () => void): () => void {
  const { signal } = request;
  let ended = false;
  const once = () => {
    if (ended) return;
    ended = true;
    signal.removeEventListener('abort', once);
    end();
  };
  if (signal.aborted) queueMicrotask(once);
  else signal.addEventListener('abort', once, { once: true });
  return once;
}
