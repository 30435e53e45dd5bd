/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query CatalogOverview($catalogId: ID!, $classificationId: ID!, $groupId: ID!, $languageId: String) {\n  products: catalogProducts(\n    catalogId: $catalogId\n    classificationGroupId: $groupId\n    languageId: $languageId\n    pageSize: 5\n  )\n  group: classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n    levels: 1\n    languageId: $languageId\n  )\n  groups: classificationGroups(\n    classificationId: $classificationId\n    languageId: $languageId\n    pageSize: 5\n  )\n}": typeof types.CatalogOverviewDocument,
    "query ClassificationGroup($classificationId: ID!, $groupId: ID!, $levels: Int, $languageId: String) {\n  classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n    levels: $levels\n    languageId: $languageId\n  )\n}": typeof types.ClassificationGroupDocument,
    "query ClassificationGroups($classificationId: ID!, $languageId: String, $page: Int, $pageSize: Int) {\n  classificationGroups(\n    classificationId: $classificationId\n    languageId: $languageId\n    page: $page\n    pageSize: $pageSize\n  )\n}": typeof types.ClassificationGroupsDocument,
    "query DeferredProducts($catalogId: ID!, $classificationId: ID!, $groupId: ID!) {\n  classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n  )\n  ... @defer(label: \"products\") {\n    catalogProducts(\n      catalogId: $catalogId\n      classificationGroupId: $groupId\n      pageSize: 5\n    )\n  }\n}": typeof types.DeferredProductsDocument,
    "query Entities($representations: [_Any!]!, $catalogId: ID!, $groupId: ID!, $languageId: String) {\n  _entities(representations: $representations) {\n    __typename\n    ... on Catalog {\n      catalogId\n      products(classificationGroupId: $groupId, languageId: $languageId, pageSize: 5)\n    }\n    ... on Classification {\n      classificationId\n      groups(languageId: $languageId, pageSize: 5)\n      group(classificationGroupId: $groupId, levels: 1, languageId: $languageId)\n    }\n    ... on ClassificationGroup {\n      classificationId\n      classificationGroupId\n      group(levels: 1, languageId: $languageId)\n      products(catalogId: $catalogId, languageId: $languageId, pageSize: 5)\n    }\n  }\n}": typeof types.EntitiesDocument,
    "query CatalogProducts($catalogId: ID!, $groupId: ID, $languageId: String, $sorting: String, $page: Int, $pageSize: Int) {\n  catalogProducts(\n    catalogId: $catalogId\n    classificationGroupId: $groupId\n    languageId: $languageId\n    sorting: $sorting\n    page: $page\n    pageSize: $pageSize\n  )\n}": typeof types.CatalogProductsDocument,
};
const documents: Documents = {
    "query CatalogOverview($catalogId: ID!, $classificationId: ID!, $groupId: ID!, $languageId: String) {\n  products: catalogProducts(\n    catalogId: $catalogId\n    classificationGroupId: $groupId\n    languageId: $languageId\n    pageSize: 5\n  )\n  group: classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n    levels: 1\n    languageId: $languageId\n  )\n  groups: classificationGroups(\n    classificationId: $classificationId\n    languageId: $languageId\n    pageSize: 5\n  )\n}": types.CatalogOverviewDocument,
    "query ClassificationGroup($classificationId: ID!, $groupId: ID!, $levels: Int, $languageId: String) {\n  classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n    levels: $levels\n    languageId: $languageId\n  )\n}": types.ClassificationGroupDocument,
    "query ClassificationGroups($classificationId: ID!, $languageId: String, $page: Int, $pageSize: Int) {\n  classificationGroups(\n    classificationId: $classificationId\n    languageId: $languageId\n    page: $page\n    pageSize: $pageSize\n  )\n}": types.ClassificationGroupsDocument,
    "query DeferredProducts($catalogId: ID!, $classificationId: ID!, $groupId: ID!) {\n  classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n  )\n  ... @defer(label: \"products\") {\n    catalogProducts(\n      catalogId: $catalogId\n      classificationGroupId: $groupId\n      pageSize: 5\n    )\n  }\n}": types.DeferredProductsDocument,
    "query Entities($representations: [_Any!]!, $catalogId: ID!, $groupId: ID!, $languageId: String) {\n  _entities(representations: $representations) {\n    __typename\n    ... on Catalog {\n      catalogId\n      products(classificationGroupId: $groupId, languageId: $languageId, pageSize: 5)\n    }\n    ... on Classification {\n      classificationId\n      groups(languageId: $languageId, pageSize: 5)\n      group(classificationGroupId: $groupId, levels: 1, languageId: $languageId)\n    }\n    ... on ClassificationGroup {\n      classificationId\n      classificationGroupId\n      group(levels: 1, languageId: $languageId)\n      products(catalogId: $catalogId, languageId: $languageId, pageSize: 5)\n    }\n  }\n}": types.EntitiesDocument,
    "query CatalogProducts($catalogId: ID!, $groupId: ID, $languageId: String, $sorting: String, $page: Int, $pageSize: Int) {\n  catalogProducts(\n    catalogId: $catalogId\n    classificationGroupId: $groupId\n    languageId: $languageId\n    sorting: $sorting\n    page: $page\n    pageSize: $pageSize\n  )\n}": types.CatalogProductsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query CatalogOverview($catalogId: ID!, $classificationId: ID!, $groupId: ID!, $languageId: String) {\n  products: catalogProducts(\n    catalogId: $catalogId\n    classificationGroupId: $groupId\n    languageId: $languageId\n    pageSize: 5\n  )\n  group: classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n    levels: 1\n    languageId: $languageId\n  )\n  groups: classificationGroups(\n    classificationId: $classificationId\n    languageId: $languageId\n    pageSize: 5\n  )\n}"): (typeof documents)["query CatalogOverview($catalogId: ID!, $classificationId: ID!, $groupId: ID!, $languageId: String) {\n  products: catalogProducts(\n    catalogId: $catalogId\n    classificationGroupId: $groupId\n    languageId: $languageId\n    pageSize: 5\n  )\n  group: classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n    levels: 1\n    languageId: $languageId\n  )\n  groups: classificationGroups(\n    classificationId: $classificationId\n    languageId: $languageId\n    pageSize: 5\n  )\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ClassificationGroup($classificationId: ID!, $groupId: ID!, $levels: Int, $languageId: String) {\n  classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n    levels: $levels\n    languageId: $languageId\n  )\n}"): (typeof documents)["query ClassificationGroup($classificationId: ID!, $groupId: ID!, $levels: Int, $languageId: String) {\n  classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n    levels: $levels\n    languageId: $languageId\n  )\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ClassificationGroups($classificationId: ID!, $languageId: String, $page: Int, $pageSize: Int) {\n  classificationGroups(\n    classificationId: $classificationId\n    languageId: $languageId\n    page: $page\n    pageSize: $pageSize\n  )\n}"): (typeof documents)["query ClassificationGroups($classificationId: ID!, $languageId: String, $page: Int, $pageSize: Int) {\n  classificationGroups(\n    classificationId: $classificationId\n    languageId: $languageId\n    page: $page\n    pageSize: $pageSize\n  )\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query DeferredProducts($catalogId: ID!, $classificationId: ID!, $groupId: ID!) {\n  classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n  )\n  ... @defer(label: \"products\") {\n    catalogProducts(\n      catalogId: $catalogId\n      classificationGroupId: $groupId\n      pageSize: 5\n    )\n  }\n}"): (typeof documents)["query DeferredProducts($catalogId: ID!, $classificationId: ID!, $groupId: ID!) {\n  classificationGroup(\n    classificationId: $classificationId\n    classificationGroupId: $groupId\n  )\n  ... @defer(label: \"products\") {\n    catalogProducts(\n      catalogId: $catalogId\n      classificationGroupId: $groupId\n      pageSize: 5\n    )\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Entities($representations: [_Any!]!, $catalogId: ID!, $groupId: ID!, $languageId: String) {\n  _entities(representations: $representations) {\n    __typename\n    ... on Catalog {\n      catalogId\n      products(classificationGroupId: $groupId, languageId: $languageId, pageSize: 5)\n    }\n    ... on Classification {\n      classificationId\n      groups(languageId: $languageId, pageSize: 5)\n      group(classificationGroupId: $groupId, levels: 1, languageId: $languageId)\n    }\n    ... on ClassificationGroup {\n      classificationId\n      classificationGroupId\n      group(levels: 1, languageId: $languageId)\n      products(catalogId: $catalogId, languageId: $languageId, pageSize: 5)\n    }\n  }\n}"): (typeof documents)["query Entities($representations: [_Any!]!, $catalogId: ID!, $groupId: ID!, $languageId: String) {\n  _entities(representations: $representations) {\n    __typename\n    ... on Catalog {\n      catalogId\n      products(classificationGroupId: $groupId, languageId: $languageId, pageSize: 5)\n    }\n    ... on Classification {\n      classificationId\n      groups(languageId: $languageId, pageSize: 5)\n      group(classificationGroupId: $groupId, levels: 1, languageId: $languageId)\n    }\n    ... on ClassificationGroup {\n      classificationId\n      classificationGroupId\n      group(levels: 1, languageId: $languageId)\n      products(catalogId: $catalogId, languageId: $languageId, pageSize: 5)\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query CatalogProducts($catalogId: ID!, $groupId: ID, $languageId: String, $sorting: String, $page: Int, $pageSize: Int) {\n  catalogProducts(\n    catalogId: $catalogId\n    classificationGroupId: $groupId\n    languageId: $languageId\n    sorting: $sorting\n    page: $page\n    pageSize: $pageSize\n  )\n}"): (typeof documents)["query CatalogProducts($catalogId: ID!, $groupId: ID, $languageId: String, $sorting: String, $page: Int, $pageSize: Int) {\n  catalogProducts(\n    catalogId: $catalogId\n    classificationGroupId: $groupId\n    languageId: $languageId\n    sorting: $sorting\n    page: $page\n    pageSize: $pageSize\n  )\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;