import { subtree, type CatalogData, type DemoIndex, type ProductData } from './data.ts';
import { BadRequestError, fail, ok, type Reply } from './envelope.ts';
import { resolveLanguage, translations, type Language } from './language.ts';
import { paginate, pagingParams } from './params.ts';

const NOT_FOUND = 'No Products found';

type Compare = (a: ProductData, b: ProductData) => number;

/** Sortable properties by their lower-cased name, so `statusid` works like `statusId`. */
function comparators(language: Language | null): Record<string, Compare> {
  const collator = new Intl.Collator(language ?? 'en');
  return {
    productid: (a, b) => a.productId.localeCompare(b.productId, 'en'),
    statusid: (a, b) => a.statusId.localeCompare(b.statusId, 'en'),
    _objectname: (a, b) => collator.compare(a.name[language ?? 'en'], b.name[language ?? 'en']),
    classificationgroupid: (a, b) => a.groupId.localeCompare(b.groupId, 'en'),
  };
}

/**
 * Parses `sorting` such as `-statusId,+productId`. A `+` that arrived unencoded decodes to a
 * space, so a leading space also means ascending. productId breaks ties for stable pages.
 */
function parseSorting(raw: string | null, language: Language | null): Compare {
  const table = comparators(language);
  const keys = raw === null || raw.trim() === '' ? [] : raw.split(',');
  const parts = keys.map((key) => {
    const k = key.trim();
    const desc = k.startsWith('-');
    const name = k.replace(/^[+-]/, '');
    const cmp = table[name.toLowerCase()];
    if (!cmp)
      throw new BadRequestError(
        `Unknown sorting property '${name}'; expected productId, statusId, _objectName or classificationGroupId`,
      );
    return desc ? (a: ProductData, b: ProductData) => cmp(b, a) : cmp;
  });
  parts.push(table.productid!);
  return (a, b) => parts.reduce((r, cmp) => r || cmp(a, b), 0);
}

/** Applies classificationId / classificationGroupClassificationId / classificationGroupId. */
function filterProducts(data: DemoIndex, catalog: CatalogData, query: URLSearchParams): ProductData[] {
  const classificationId = query.get('classificationId');
  const groupClassificationId = query.get('classificationGroupClassificationId');
  const groupId = query.get('classificationGroupId');
  // A catalog is classified by one classification, so a different one matches nothing.
  for (const id of [classificationId, groupClassificationId]) {
    if (id !== null && id !== catalog.classificationId) return [];
  }
  if (groupId === null) return [...catalog.products];
  const classification = data.classifications.get(catalog.classificationId);
  const group = classification?.byId.get(groupId);
  if (!classification || !group) return [];
  // A group stands for its whole branch: products of every descendant group match too.
  const branch = new Set(subtree(classification, group, 0).map((g) => g.id));
  return catalog.products.filter((p) => branch.has(p.groupId));
}

/** The product search record: basic fields only, like the real search export. */
function productRecord(p: ProductData, language: Language | null): Record<string, unknown> {
  const record: Record<string, unknown> = {
    productId: p.productId,
    catalogId: p.catalogId,
    _objectName: p.name[language ?? 'en'],
    _objectDescription: p.description[language ?? 'en'],
    _objectPreviewURI: p.image,
    statusId: p.statusId,
    classificationGroupId: p.groupId,
  };
  if (language === null) {
    record._objectNames = translations(p.name, null);
    record._objectDescriptions = translations(p.description, null);
  }
  return record;
}

/** `GET /catalogs/{catalogId}/products/search`. */
export function searchProducts(data: DemoIndex, catalogId: string, query: URLSearchParams): Reply {
  const languageId = query.get('languageId');
  const language = resolveLanguage(languageId);
  const { page, pageSize } = pagingParams(query);
  const compare = parseSorting(query.get('sorting'), language);
  const catalog = data.catalogs.get(catalogId);
  if (!catalog) return fail(404, languageId, NOT_FOUND);
  const result = paginate(filterProducts(data, catalog, query).sort(compare), page, pageSize);
  if (!result) return fail(404, languageId, NOT_FOUND);
  return ok(
    languageId,
    result.slice.map((p) => productRecord(p, language)),
    result.paging,
  );
}
