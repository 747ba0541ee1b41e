// Bundles the extension client, the language server and the CLI with esbuild, and copies the two
// .wasm files that web-tree-sitter needs beside the bundles (dist/ is all the .vsix ships).
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const dist = path.join(root, 'dist');
fs.mkdirSync(dist, { recursive: true });

// web-tree-sitter's ESM build reads import.meta.url, which a CommonJS bundle lacks; bundle its CJS build instead.
const webTreeSitterCjs = {
  name: 'web-tree-sitter-cjs',
  setup(build) {
    build.onResolve({ filter: /^web-tree-sitter$/ }, () => ({
      path: path.join(path.dirname(require.resolve('web-tree-sitter')), 'tree-sitter.cjs'),
    }));
  },
};

const common = {
  plugins: [webTreeSitterCjs],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  minifySyntax: true,
};

const entries = [
  { in: 'extension/src/extension.ts', out: 'extension', external: ['vscode'] },
  { in: 'server/src/server.ts', out: 'server', banner: '#!/usr/bin/env node' },
  { in: 'server/src/cli/main.ts', out: 'cli', banner: '#!/usr/bin/env node' },
];

await Promise.all(
  entries
    .filter((entry) => fs.existsSync(path.join(root, entry.in)))
    .map((entry) =>
      esbuild.build({
        ...common,
        entryPoints: [path.join(root, entry.in)],
        outfile: path.join(dist, `${entry.out}.js`),
        external: entry.external ?? [],
        banner: entry.banner ? { js: entry.banner } : undefined,
      }),
    ),
);

// Webview bundles run in the browser, not in Node.
const webviewEntry = path.join(root, 'extension/src/webview/main.ts');
if (fs.existsSync(webviewEntry)) {
  await esbuild.build({
    ...common,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    entryPoints: [webviewEntry],
    outfile: path.join(dist, 'webview.js'),
  });
  // The panel's stylesheet ships beside its script (the webview may load from dist/ only).
  fs.copyFileSync(path.join(root, 'extension/src/webview/panel.css'), path.join(dist, 'webview.css'));
}

for (const [pkg, file] of [
  ['web-tree-sitter', 'tree-sitter.wasm'],
  ['tree-sitter-python', 'tree-sitter-python.wasm'],
]) {
  let dir = path.dirname(require.resolve(pkg));
  while (!fs.existsSync(path.join(dir, file)) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const source = path.join(dir, file);
  fs.copyFileSync(source, path.join(dist, file));
}
// The rules' tree-sitter queries ship as data beside the server (engine/queries.ts reads dist/queries/).
const queriesOut = path.join(dist, 'queries');
fs.mkdirSync(queriesOut, { recursive: true });
for (const file of fs.readdirSync(path.join(root, 'server/src/rules/queries'))) {
  if (file.endsWith('.scm')) fs.copyFileSync(path.join(root, 'server/src/rules/queries', file), path.join(queriesOut, file));
}

for (const file of ['cli.js', 'server.js']) {
  const target = path.join(dist, file);
  if (fs.existsSync(target)) fs.chmodSync(target, 0o755);
}
