import DataLoader from 'dataloader';
import { context, type Context } from '@opentelemetry/api';
import { buildRequest, type InputLimits, type OperationName, type PimArgs, type PimRequest } from './rest/endpoints.ts';
import type { ByteAccount } from './rest/byte-limits.ts';
import type { PimClient } from './client.ts';
import { PimError } from './rest/errors.ts';
import { freshnessAt, NOT_FRESH, type Expiry } from './rest/freshness.ts';
import { tagsOf } from './cache/tags.ts';
import type { Answer, CallOptions, Freshness } from './rest/types.ts';

export interface PimApiOptions {
  client: PimClient;
  /** Headers sent with every call of this GraphQL request (credentials, request id). */
  headers: Record<string, string>;
  limits: InputLimits;
  /** Aborted when the GraphQL request is cancelled, so upstream calls stop with it. */
  signal?: AbortSignal | undefined;
  /** Epoch ms by which this request's upstream work must be done. */
  deadline: number;
  /** Where this request's upstream bytes are counted. */
  bytes: ByteAccount;
  /** Distinct calls this API may send; the ones past it fail with BAD_USER_INPUT unsent. */
  maxCalls: number;
  /** Told about each load the DataLoader answers from its cache instead of a new call. */
  onDedup?: ((request: PimRequest) => void) | undefined;
  /** Where this request's calls wait for a connection (see CallOptions). */
  queue?: Pick<CallOptions, 'queueKey' | 'queueShare'> | undefined;
  /** The credential partition of `headers` (see CallOptions), computed once for the request. */
  partition?: string | undefined;
  /** Whom a 401 to its calls refuses (see CallOptions), computed once for the request. */
  identity?: string | undefined;
}

/** Where a field sits in the response; GraphQL's `info.path` is one. */
export interface FieldPath {
  readonly prev: FieldPath | undefined;
  readonly key: string | number;
}

/**
 * The field a call answers: where it sits and the selections that asked for it (GraphQL's field nodes, opaque here:
 * this folder knows no GraphQL). GraphQL's `info` is one.
 */
export interface FieldAt {
  readonly path: FieldPath;
  readonly fieldNodes: readonly object[];
}

/** A field answered past its freshness: where, how old its data is, and why (`revalidating` or an error code). */
export interface StaleField {
  path: Array<string | number>;
  age: number;
  reason: string;
}

/**
 * Arguments a field fills from its entity's key under another name, by the key field each came from
 * (`{ classificationGroupClassificationId: 'classificationId' }`): its errors name what the client wrote.
 */
export type KeyNames = Readonly<Record<string, string>>;

/** The three REST operations as one GraphQL request sees them; each resolves with the answer's body. */
export type PimApi = Record<OperationName, (args: PimArgs, at?: FieldAt, keyNames?: KeyNames) => Promise<unknown>> & {
  /** How long every answer used so far stays fresh (the least of them); undefined before any load settled. */
  freshness(): Freshness | undefined;
  /** When that least freshness ends (epoch ms), for whoever tells it later (a hit of the cache of results). */
  expiry(): Expiry | undefined;
  /** The fields answered with stale data so far. */
  stale(): readonly StaleField[];
  /** The catalogs and classifications read so far, as tags (see tags.ts). */
  tags(): ReadonlySet<string>;
  /**
   * The same loaders, limits and budget for one operation of the request (a batch has several): its `stale()` lists
   * only the fields that operation read stale, at paths of its own result.
   */
  operation(): PimApi;
};

/**
 * Creates the per-request API. One DataLoader keyed by the request path means identical calls
 * from aliases, repeated fields or fragments are sent once; distinct calls go out in parallel.
 */
export function createPimApi({
  client,
  headers,
  limits,
  signal,
  deadline,
  bytes,
  maxCalls,
  onDedup,
  queue,
  partition,
  identity,
}: PimApiOptions): PimApi {
  // The same for every call of the request; no step changes it (those that add to it copy it).
  const callOptions = { headers, signal, deadline, bytes, partition, identity, ...queue };
  // The trace context of each path's first load. The operations of a batch share this DataLoader, whose batch runs
  // in the context of the tick's first load: each call goes out under the span of the operation that asked first.
  const traced = new Map<string, Context>();
  const loader = new DataLoader<PimRequest, Promise<Answer>, string>(
    // The REST service has no batch endpoint: a batch becomes parallel GETs, one per key. Each key
    // settles with its own promise, so a fast field (or the first part of a @defer response)
    // never waits for the slowest call of its batch.
    async (requests) =>
      requests.map((r) => context.with(traced.get(r.path) ?? context.active(), () => client.get(r, callOptions))),
    { cacheKeyFn: (r) => r.path },
  );
  // Each distinct path, and when its first load began: an invalidation of the path since then ended what it read.
  const distinct = new Map<string, number>();
  let pastCap: PimError | undefined;
  const staleFields: StaleField[] = [];
  // The tags of the first `from` distinct paths; paths are only ever added.
  let tagged: { from: number; tags: ReadonlySet<string> } | undefined;
  // When the least fresh answer read so far stops being fresh (epoch ms), for a browser and a shared cache: an answer
  // read early in a long execution has less left when the result goes out than when it was read.
  let least: Expiry | undefined;
  // Every load counts, DataLoader hits included; a failed one makes the response not reusable.
  const record = (freshness: Freshness) => {
    const now = Date.now();
    least = {
      maxUntil: Math.min(least?.maxUntil ?? Infinity, now + freshness.maxAgeS * 1_000),
      sharedUntil: Math.min(least?.sharedUntil ?? Infinity, now + freshness.sharedMaxAgeS * 1_000),
      shared: (least?.shared ?? true) && freshness.shared,
    };
  };
  const load = (operation: OperationName, args: PimArgs) => {
    const request = buildRequest(operation, args, limits);
    if (!distinct.has(request.path)) {
      // One refusal for every field past the cap: a request of many such fields builds one error, not one each.
      if (distinct.size >= maxCalls) throw (pastCap ??= tooManyCalls(maxCalls));
      distinct.set(request.path, Date.now());
      traced.set(request.path, context.active());
    } else onDedup?.(request);
    return loader.load(request);
  };
  // What the result may claim: nothing fresh once a path it read was invalidated after its load began (a purge that came
  // while the request ran, here or read from the fleet). Its answer, read before, is what the purge ended: a browser or
  // CDN keeping the response (maybe after the CDN's own purge, which follows the façade's) would keep the old catalog.
  const current = (): Expiry | undefined => {
    if (least === undefined) return undefined;
    for (const [path, at] of distinct) if (client.invalidatedSince(path) >= at) return PURGED;
    return least;
  };
  // `stale`: the list of the operation that reads (operation()), where each field read stale is written once.
  const call =
    (operation: OperationName, stale = staleFields) =>
    async (args: PimArgs, at?: FieldAt) => {
      try {
        const answer = await load(operation, args);
        bytes.send(answer.size);
        record(answer.freshness);
        if (answer.stale) stale.push({ path: pathOf(at?.path), age: answer.stale.ageS, reason: answer.stale.reason });
        return answer.body;
      } catch (error) {
        record(NOT_FRESH);
        throw error;
      }
    };
  const api: PimApi = {
    searchProducts: call('searchProducts'),
    getClassificationGroup: call('getClassificationGroup'),
    listClassificationGroups: call('listClassificationGroups'),
    operation: () => {
      const own: StaleField[] = [];
      return {
        ...api,
        searchProducts: call('searchProducts', own),
        getClassificationGroup: call('getClassificationGroup', own),
        listClassificationGroups: call('listClassificationGroups', own),
        stale: () => own,
      };
    },
    freshness: () => {
      const expiry = current();
      return expiry && freshnessAt(expiry);
    },
    expiry: () => current(),
    stale: () => staleFields,
    // Read off the paths only when asked (most responses, no-store or failed, never name their tags), and
    // once: HTTP caching and the result cache both ask for a cacheable response's.
    tags: () => {
      if (tagged?.from !== distinct.size)
        tagged = { from: distinct.size, tags: new Set([...distinct.keys()].flatMap(tagsOf)) };
      return tagged.tags;
    },
  };
  return api;
}

const PURGED: Expiry = { maxUntil: 0, sharedUntil: 0, shared: false };

/** A field's path as the response writes it (`["_entities", 3, "products"]`). */
export function pathOf(at: FieldPath | undefined): Array<string | number> {
  const keys: Array<string | number> = [];
  for (let step = at; step; step = step.prev) keys.unshift(step.key);
  return keys;
}

function tooManyCalls(max: number): PimError {
  return new PimError('BAD_USER_INPUT', `This request needs more than ${max} distinct catalog calls; split it up`);
}
