/**
 * Descriptions of the arguments several fields share, worded after the REST interface.
 * Kept here so each one is written once.
 */
export const describe = {
  catalogId: 'Catalog identifier.',
  classificationId: 'Classification identifier.',
  classificationGroupId: 'Classification group identifier.',
  languageId: 'Language of names and descriptions, e.g. "en", "de" or "de-DE". Absent: all translations.',
  page: 'Page to return, counted from 0.',
  pageSize: 'Items per page, at least 1.',
} as const;

/** The opaque result every field returns: the REST service\'s JSON body unchanged, envelope included. */
export const resultDescription = "The service's JSON body unchanged: `{ status, meta, data }`.";

/** What an entity type says about itself: a reference is its key alone. */
export const entityDescription =
  'Other subgraphs reference it by its key; resolving a reference calls nothing, each field selected on it calls the PIM.';
