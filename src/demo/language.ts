import type { LocalizedText } from './data.ts';

/** The languages the demo data carries; the first is the fallback. */
const LANGUAGES = ['en', 'de'] as const;
/** One of the demo languages. */
export type Language = (typeof LANGUAGES)[number];

/**
 * Maps a `languageId` parameter to a demo language: `de-DE`/`de_AT` count as `de`, and any
 * language the data lacks falls back to `en`, as a PIM does with its fallback language.
 * `null` (no parameter) means "all translations".
 */
export function resolveLanguage(languageId: string | null): Language | null {
  if (languageId === null) return null;
  const base = languageId.toLowerCase().split(/[-_]/)[0];
  return LANGUAGES.find((l) => l === base) ?? LANGUAGES[0];
}

/** `[{ languageId, value }]` for one language, or for all of them when `language` is null. */
export function translations(text: LocalizedText, language: Language | null): { languageId: string; value: string }[] {
  // A text the data lacks in a language is left out, not sent as an entry without a value.
  return (language ? [language] : LANGUAGES).flatMap((l) =>
    text[l] === undefined ? [] : [{ languageId: l, value: text[l] }],
  );
}
