import { readFileSync } from 'node:fs';

/** A text in each demo language; `de` falls back to the English source where the preset had none. */
export interface LocalizedText {
  de: string;
  en: string;
}

/** One classification group as stored in `data/catalog.json`. */
export interface GroupData {
  id: string;
  parent?: string;
  hierarchyCode: string;
  orderNo: number;
  name: LocalizedText;
  description: LocalizedText;
  createdOn: string;
  changedOn: string;
}

/** One classification with all its groups, stored in depth-first (= orderNo) order. */
export interface ClassificationData {
  classificationId: string;
  type: string;
  versionNo: string;
  orderNo: number;
  name: LocalizedText;
  groups: GroupData[];
}

/** One product as stored; `groupId` is its most specific classification group. */
export interface ProductData {
  productId: string;
  catalogId: string;
  groupId: string;
  name: LocalizedText;
  description: LocalizedText;
  image: string;
  statusId: string;
}

/** A catalog classified by exactly one classification. */
export interface CatalogData {
  catalogId: string;
  classificationId: string;
  products: ProductData[];
}

/** A classification with lookups by group id and by parent. */
export interface ClassificationIndex extends ClassificationData {
  byId: Map<string, GroupData>;
  /** Children of each group (key `undefined` holds the roots), in orderNo order. */
  children: Map<string | undefined, GroupData[]>;
}

/** The demo catalog, indexed for the three REST operations. */
export interface DemoIndex {
  classifications: Map<string, ClassificationIndex>;
  catalogs: Map<string, CatalogData>;
}

function indexClassification(c: ClassificationData): ClassificationIndex {
  const byId = new Map(c.groups.map((g) => [g.id, g]));
  const children = new Map<string | undefined, GroupData[]>();
  for (const g of [...c.groups].sort((a, b) => a.orderNo - b.orderNo)) {
    const siblings = children.get(g.parent) ?? [];
    siblings.push(g);
    children.set(g.parent, siblings);
  }
  return { ...c, byId, children };
}

let cached: DemoIndex | undefined;

/** Loads and indexes `data/catalog.json` once per process; the data never changes at runtime. */
export function loadDemoData(): DemoIndex {
  if (cached) return cached;
  const raw = JSON.parse(readFileSync(new URL('./data/catalog.json', import.meta.url), 'utf8')) as {
    classifications: ClassificationData[];
    catalogs: CatalogData[];
  };
  cached = {
    classifications: new Map(raw.classifications.map((c) => [c.classificationId, indexClassification(c)])),
    catalogs: new Map(raw.catalogs.map((c) => [c.catalogId, c])),
  };
  return cached;
}

/**
 * The group followed by its descendants, depth-first in orderNo order.
 * `levels` undefined: the group only; 0: every level; n: n levels below the group.
 */
export function subtree(c: ClassificationIndex, group: GroupData, levels?: number): GroupData[] {
  const out: GroupData[] = [group];
  const maxDepth = levels === undefined ? 0 : levels === 0 ? Infinity : levels;
  const walk = (id: string, depth: number): void => {
    if (depth > maxDepth) return;
    for (const child of c.children.get(id) ?? []) {
      out.push(child);
      walk(child.id, depth + 1);
    }
  };
  walk(group.id, 1);
  return out;
}
