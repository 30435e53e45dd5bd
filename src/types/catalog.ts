// Types of the JSON values the GraphQL fields return: the REST service's bodies, unchanged.
// This module imports nothing, so a frontend may copy it as it is (see docs/integration.md).
// The interface specifies no body shapes: every field below is OBSERVED (the prodexa PXM
// documentation's captured answers and the bundled demo), not promised; the façade never checks them.

/** One text in one language, e.g. `{ languageId: "en", value: "Excavators" }`. Observed. */
export interface LocalizedValue {
  languageId: string;
  value: string;
}

/** `meta.paging` of a paged answer (older prodexa docs, captured from real systems, and the demo). Observed. */
export interface CatalogPaging {
  per_page: number;
  page: number;
  total_pages: number;
  total_items: number;
  /** Group listing only, e.g. `"OrderNo: ASC"`. */
  sorting?: string;
  /** Group listing only: absolute URLs of the service itself (`prev`/`next` only where such a page exists). */
  links?: { self: string; first: string; prev?: string; next?: string; last: string };
}

/** `meta` of every answer. Observed. */
export interface CatalogMeta {
  /** The caller's `languageId` echoed; `null` when none was given (then all translations come back). */
  languageId: string | null;
  /** Present on the product search and the group listing. */
  paging?: CatalogPaging;
  /** `"application/json"` in the captured answers and the demo. */
  contentType?: string;
}

/** `{ status, meta, data }`: a successful answer. Observed. */
export interface CatalogEnvelope<TRecord> {
  status: 200;
  meta: CatalogMeta;
  data: TRecord[];
}

/** One product search hit: "only basic product fields". Observed; ids are the only sure fields. */
export interface ProductRecord {
  productId: string;
  catalogId: string;
  /** Display name in the requested language. */
  _objectName?: string;
  _objectDescription?: string;
  /** Preview image URL. */
  _objectPreviewURI?: string;
  /** A numeric string such as `"400"`. */
  statusId?: string;
  /** The product's most specific group (demo). */
  classificationGroupId?: string;
  /** Every translation of the name, when no `languageId` was given (demo). */
  _objectNames?: LocalizedValue[];
  /** Every translation of the description, when no `languageId` was given (demo). */
  _objectDescriptions?: LocalizedValue[];
}

/** One classification group. Observed. */
export interface ClassificationGroupRecord {
  classificationGroupId: string;
  classificationId?: string;
  /** Absent (not null) on a root group; with `levels`, links the flat list into a tree. */
  parentClassificationGroupId?: string;
  /** e.g. `"050200"`. */
  hierarchyCode?: string;
  shortDescription?: LocalizedValue[];
  longDescriptions?: LocalizedValue[];
  fallbackDescShort?: string;
  documentUrl1?: string;
  documentUrl2?: string;
  documentUrl3?: string;
  orderNo?: number;
  /** A numeric string such as `"400"`; note the capital `ID`, unlike the product's `statusId`. */
  statusID?: string;
  attributes?: unknown[];
  /** ISO timestamps and user names. */
  createdOn?: string;
  createdBy?: string;
  changedOn?: string;
  changedBy?: string;
}

/**
 * The REST service's 404 body. Through GraphQL it never is a field value: the field is null
 * with a `NOT_FOUND` error whose message is this body's `error` text, then the ids asked for
 * (`No Products found: catalogId "X"`). Observed.
 */
export interface CatalogNotFound {
  status: 404;
  meta: { languageId: string | null };
  /** e.g. `"No Products found"`, `"No Classification found"`. */
  error: string;
}

/**
 * The value of each GraphQL field: the root fields by name, the fields of the federation entities
 * by schema coordinate (`Type.field`); each entity field answers what the root field it names does.
 */
export interface CatalogFieldResults {
  /** Paged (`meta.paging` without `sorting`/`links`). */
  catalogProducts: CatalogEnvelope<ProductRecord>;
  /** The group first, then its descendants when `levels` was given; no paging. */
  classificationGroup: CatalogEnvelope<ClassificationGroupRecord>;
  /** Paged, with `meta.paging.sorting` and `links`. */
  classificationGroups: CatalogEnvelope<ClassificationGroupRecord>;
  /** `catalogProducts` of this catalog. */
  'Catalog.products': CatalogEnvelope<ProductRecord>;
  /** `classificationGroups` of this classification. */
  'Classification.groups': CatalogEnvelope<ClassificationGroupRecord>;
  /** `classificationGroup` in this classification. */
  'Classification.group': CatalogEnvelope<ClassificationGroupRecord>;
  /** `classificationGroup` of this group. */
  'ClassificationGroup.group': CatalogEnvelope<ClassificationGroupRecord>;
  /** `catalogProducts` of this group in the catalog asked for. */
  'ClassificationGroup.products': CatalogEnvelope<ProductRecord>;
}

/** The fields of the catalog schema: root field names and entity field coordinates. */
export type CatalogField = keyof CatalogFieldResults;

/** True when `value` has the envelope's shape: `status` 200, a `meta` object and a `data` array. */
export function isCatalogEnvelope(value: unknown): value is CatalogEnvelope<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const { status, meta, data } = value as Record<string, unknown>;
  return status === 200 && typeof meta === 'object' && meta !== null && Array.isArray(data);
}

/**
 * Narrows one field's `unknown` (the `JSON` scalar) to its envelope type. Checks the envelope's
 * shape only; the records are typed as observed, not checked. `null` (a failed field) stays null.
 *
 * @throws TypeError when a non-null value is not an envelope
 */
export function catalogResult<F extends CatalogField>(field: F, value: unknown): CatalogFieldResults[F] | null {
  if (value === null || value === undefined) return null;
  if (!isCatalogEnvelope(value)) throw new TypeError(`${field}: expected { status: 200, meta, data[] }`);
  return value as CatalogFieldResults[F];
}
