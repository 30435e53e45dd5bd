import { subtree, type ClassificationIndex, type DemoIndex, type GroupData } from './data.ts';
import { fail, ok, type Reply } from './envelope.ts';
import { resolveLanguage, translations, type Language } from './language.ts';
import { intParam, paginate, pagingParams } from './params.ts';

const NOT_FOUND = 'No Classification found';

/** The classification group record as documented for prodexa PXM. */
function groupRecord(c: ClassificationIndex, g: GroupData, language: Language | null): Record<string, unknown> {
  return {
    classificationGroupId: g.id,
    classificationId: c.classificationId,
    // Absent, not null, on a root group, as in the documented records.
    ...(g.parent === undefined ? {} : { parentClassificationGroupId: g.parent }),
    hierarchyCode: g.hierarchyCode,
    shortDescription: translations(g.name, language),
    longDescriptions: translations(g.description, language),
    fallbackDescShort: g.name.en,
    orderNo: g.orderNo,
    statusID: '400',
    attributes: [],
    createdOn: g.createdOn,
    createdBy: 'pxm.import',
    changedOn: g.changedOn,
    changedBy: 'catalog.manager',
  };
}

/** `GET /classifications/{classificationId}/groups/{classificationGroupId}`. */
export function readGroup(data: DemoIndex, classificationId: string, groupId: string, query: URLSearchParams): Reply {
  const languageId = query.get('languageId');
  const language = resolveLanguage(languageId);
  const levels = intParam(query, 'levels', 0, 2 ** 31 - 1);
  const classification = data.classifications.get(classificationId);
  const group = classification?.byId.get(groupId);
  if (!classification || !group) return fail(404, languageId, NOT_FOUND);
  const groups = subtree(classification, group, levels);
  return ok(
    languageId,
    groups.map((g) => groupRecord(classification, g, language)),
  );
}

/** Absolute paging links like the real listing's `paging.links`, built from the request URL. */
function pageLinks(url: URL, page: number, totalPages: number): Record<string, string> {
  const at = (p: number): string => {
    const u = new URL(url);
    u.searchParams.set('page', String(p));
    return u.href;
  };
  const links: Record<string, string> = { self: at(page), first: at(0) };
  if (page > 0) links.prev = at(page - 1);
  if (page < totalPages - 1) links.next = at(page + 1);
  links.last = at(totalPages - 1);
  return links;
}

/** `GET /classifications/{classificationId}/groups`, paged in orderNo order. */
export function listGroups(data: DemoIndex, classificationId: string, url: URL): Reply {
  const languageId = url.searchParams.get('languageId');
  const language = resolveLanguage(languageId);
  const { page, pageSize } = pagingParams(url.searchParams);
  const classification = data.classifications.get(classificationId);
  if (!classification) return fail(404, languageId, NOT_FOUND);
  const ordered = [...classification.groups].sort((a, b) => a.orderNo - b.orderNo);
  const result = paginate(ordered, page, pageSize);
  if (!result) return fail(404, languageId, NOT_FOUND);
  const paging = { ...result.paging, sorting: 'OrderNo: ASC', links: pageLinks(url, page, result.paging.total_pages) };
  return ok(
    languageId,
    result.slice.map((g) => groupRecord(classification, g, language)),
    paging,
  );
}
