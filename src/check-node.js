// Plain JavaScript on purpose: it must load on any Node.js, to refuse an old one in one line
// before a dependency crashes on it. main.ts imports it first; `npm start` also preloads it,
// since a Node.js without type stripping cannot even open main.ts.
const needed = 24;
const found = process.versions.node;
if (Number(found.split('.')[0]) < needed) {
  console.error(`This server needs Node.js ${needed} or later; found Node.js ${found} (${process.execPath})`);
  process.exit(1);
}
