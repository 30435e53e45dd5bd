#!/bin/sh
# Adds GraphiQL's prebuilt files to a production install (image build stage): only the package's own
# tarball, at the version and integrity the lockfile pins, without the ~110 MB of dependencies it
# declares but has already bundled.
set -eu
lock_entry="require('./package-lock.json').packages['node_modules/@graphql-yoga/graphiql']"
version=$(node -p "$lock_entry.version")
integrity=$(node -p "$lock_entry.integrity")
packed=$(npm pack "@graphql-yoga/graphiql@$version" --pack-destination /tmp --json --no-audit --no-fund)
echo "$packed" | node -e '
  const [pack] = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
  if (pack.integrity !== process.argv[1]) throw new Error(`integrity ${pack.integrity}, lockfile ${process.argv[1]}`);
' "$integrity"
target=node_modules/@graphql-yoga/graphiql
mkdir -p "$target"
tar -xzf "/tmp/graphql-yoga-graphiql-$version.tgz" -C "$target" --strip-components=1
# Yoga's page loads the UMD bundle; the ES module copy (7 MB) is never requested.
rm -f "$target/dist/yoga-graphiql.es.js" "/tmp/graphql-yoga-graphiql-$version.tgz"
