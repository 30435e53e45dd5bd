import { API_PREFIX, encodeComponent } from '../rest/endpoints.ts';

/**
 * The catalogs and classifications an upstream path reads, as tags (`catalog:MASTER`,
 * `classification:ETIM-9`): what invalidation matches and what the `Surrogate-Key` header names.
 * Read off the path as sent, so a stored entry carries its tags in its key and needs no index.
 * Ids keep the percent-encoding of the path, so a tag never holds a space or a comma.
 */
export function tagsOf(path: string): string[] {
  // The HTTP cache sees the base URL's own path in front of the prefix.
  const [route = '', query = ''] = path.slice(path.indexOf(API_PREFIX) + API_PREFIX.length + 1).split('?', 2);
  const [kind, id] = route.split('/', 2);
  const tags: string[] = [];
  if (kind === 'catalogs' && id) tags.push(catalogTag(id, true));
  if (kind === 'classifications' && id) tags.push(classificationTag(id, true));
  // A product search narrowed by classification changes when that classification does.
  for (const match of query.matchAll(/(?:^|&)(?:classificationId|classificationGroupClassificationId)=([^&]+)/g)) {
    tags.push(classificationTag(match[1]!, true));
  }
  // Narrowed by a group whose classification it does not name (`classificationId` filters the products, not the
  // group), it reads a classification its path does not name: any classification's.
  if (/(?:^|&)classificationGroupId=/.test(query) && !/(?:^|&)classificationGroupClassificationId=/.test(query)) {
    tags.push(ANY_CLASSIFICATION);
  }
  return [...new Set(tags)];
}

/**
 * The tag of an answer that reads some classification the path does not name (a search narrowed by a group, not by
 * the group's classification): an invalidation of any classification matches it. No id spells it: ids are never empty.
 */
export const ANY_CLASSIFICATION = 'classification:';

/** The tags an invalidation of `tag` ends beside itself: a classification's also ends {@link ANY_CLASSIFICATION}. */
export const alsoEnded = (tag: string): string | undefined =>
  tag.startsWith(ANY_CLASSIFICATION) && tag !== ANY_CLASSIFICATION ? ANY_CLASSIFICATION : undefined;

/** The tag of a catalog id; `encoded` when the id is already percent-encoded as in a path. */
export const catalogTag = (id: string, encoded = false) => `catalog:${encoded ? id : encodeComponent(id)}`;

/** The tag of a classification id; `encoded` when the id is already percent-encoded as in a path. */
export const classificationTag = (id: string, encoded = false) =>
  `classification:${encoded ? id : encodeComponent(id)}`;
