/**
 * `npm run build`: the server as JavaScript in dist/, which the image runs. TypeScript strips the types
 * (tsconfig.json here, no type check) and rewrites the `.ts` imports; the files that are not TypeScript
 * (the demo catalog, browser scripts) are copied beside them. dist/ is made afresh, so nothing deleted
 * from src/ lingers in it.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const dist = new URL('dist/', root);
rmSync(dist, { recursive: true, force: true });
// `tsc` from PATH: node_modules/.bin under npm, the global install in the image's build stage.
execFileSync('tsc', ['-p', 'deploy/image/tsconfig.json'], { cwd: root, stdio: 'inherit' });
cpSync(new URL('src/', root), dist, { recursive: true, filter: (file) => !file.endsWith('.ts') });
