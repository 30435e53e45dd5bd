/**
 * Descriptions of the arguments several fields share, worded after the REST interface.
 * Kept here so each one is written once.
 */
export const describe = {
  classificationId: 'Classification identifier.',
  languageId: 'Language of names and descriptions, e.g. "en", "de" or "de-DE". Absent: all translations.',
  page: 'Page to return, counted from 0.',
  pageSize: 'Items per page, at least 1.',
} as const;

/** The opaque result every field returns: the REST service\'s JSON body, envelope included. */
export const resultDescription = "The service's JSON body unchanged: `{ status, meta, data }`.";
