// Bundles the extension client, the language server and the CLI with esbuild, and copies the two
// .wasm files that web-tree-sitter needs beside the bundles (dist/ is all the .vsix ships). The client and the
// server are bundled twice: for Node (dist/extension.js, dist/server.js) and for VS Code for the Web
// (dist/web/extension.js in the browser's extension host, dist/web/server.js in a web worker), from the same sources.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
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

// Node modules that vscode-jsonrpc and vscode-languageserver load as they load, for what the server never does
// over stdio or IPC (a pipe's random name, a UUID, npm's global folder): each is loaded on its first use instead,
// so that a server's start does not initialise them (node:crypto alone took about 8 ms of it here).
const LAZY_BUILTINS = ['crypto', 'child_process'];
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/](vscode-jsonrpc[\\/]lib[\\/]node[\\/](main|ril)|vscode-languageserver[\\/]lib[\\/]node[\\/]files)\.js$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      let replaced = 0;
      const contents = text.replace(new RegExp(`require\\("(${LAZY_BUILTINS.join('|')})"\\)`, 'g'), (_, name) => {
        replaced++;
        // A stand-in whose properties are the module's, read when first asked (the modules use only functions of it).
        return `new Proxy({}, { get: (_, key) => require(${JSON.stringify(name)})[key] })`;
      });
      // A dependency that no longer loads them here: the list above is out of date.
      if (replaced === 0) throw new Error(`lazy-builtins: no require of ${LAZY_BUILTINS.join(' or ')} left in ${args.path}`);
      return { contents, loader: 'js' };
    });
  },
};

const common = {
  plugins: [webTreeSitterCjs, lazyBuiltins],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  minifySyntax: true,
};

// The CLI's subcommands other than `check` (server/src/cli/tools.ts) are a bundle of their own, which dist/cli.js
// requires from beside it when one of them runs: `check` and its worker threads load a third of the code.
const cliTools = {
  name: 'cli-tools-beside',
  setup(build) {
    build.onResolve({ filter: /^\.\/tools(\.js)?$/ }, (args) =>
      args.importer === path.join(root, 'server/src/cli/main.ts') ? { path: './cli-tools.js', external: true } : undefined);
  },
};

const entries = [
  { in: 'extension/src/extension.ts', out: 'extension', external: ['vscode'] },
  { in: 'server/src/node-server.ts', out: 'server-main' },
  // The memory estimate's worker thread (server/src/node-estimate-worker.ts starts it).
  { in: 'server/src/estimate-worker.ts', out: 'estimate-worker' },
  { in: 'server/src/cli/main.ts', out: 'cli', banner: '#!/usr/bin/env node', plugins: [cliTools] },
  { in: 'server/src/cli/tools.ts', out: 'cli-tools' },
];

const buildEntry = (entry, define) =>
  esbuild.build({
    ...common,
    plugins: [...common.plugins, ...(entry.plugins ?? [])],
    entryPoints: [path.join(root, entry.in)],
    outfile: path.join(dist, `${entry.out}.js`),
    external: entry.external ?? [],
    banner: entry.banner ? { js: entry.banner } : undefined,
    define,
  });

// Node decodes a file with any character beyond ASCII into a two-byte string: the 2 MB server bundle then takes 4 MB
// of the heap for good (V8 keeps a script's source) and 10 ms more to decode on every start. esbuild writes strings,
// templates and names in ASCII; what it leaves are comments it keeps (beside class fields, inside expressions) and
// regular expressions. A `\uXXXX` escape per UTF-16 unit means the same there (a comment is only text; a pattern
// reads the escape as the character, and a surrogate pair as its code point under the `u` flag).
function escapeBeyondAscii(file) {
  const target = path.join(dist, file);
  if (!fs.existsSync(target)) return;
  const text = fs.readFileSync(target, 'utf8');
  const ascii = text.replace(/[^\x00-\x7f]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== text) fs.writeFileSync(target, ascii);
}

await Promise.all(entries.filter((entry) => fs.existsSync(path.join(root, entry.in))).map((entry) => buildEntry(entry)));
for (const entry of entries) escapeBeyondAscii(`${entry.out}.js`);

// dist/server.js is a small launcher that runs dist/server-main.js from a V8 code cache (server/src/code-cache.ts),
// named by the bundle's hash: computed here, once, rather than on every start.
const serverMain = fs.readFileSync(path.join(dist, 'server-main.js'));
const serverMainDigest = { bytes: serverMain.length, sha256: createHash('sha256').update(serverMain).digest('hex') };
await buildEntry({ in: 'server/src/node-launcher.ts', out: 'server', banner: '#!/usr/bin/env node' }, { SERVER_MAIN_DIGEST: JSON.stringify(serverMainDigest) });
escapeBeyondAscii('server.js');

// VS Code for the Web. The server's bundle differs from Node's only in what scripts/build.mjs swaps here:
// - node-host.ts (Node's Host) is replaced by web/no-node-host.ts: the worker sets its own host (web/web-host.ts);
// - node:path is path-browserify and node:url web/node-url.ts (the engine computes paths; it reads no disk there);
// - the queries and translations, read from disk in Node, are a module of the bundle (oomguard:shipped);
// - process.env is empty (a worker has no environment).
const queriesDir = path.join(root, 'server/src/rules/queries');
const webPlatform = {
  name: 'oomguard-web-platform',
  setup(build) {
    build.onResolve({ filter: /^\.\/node-host$/ }, (args) =>
      args.importer === path.join(root, 'server/src/host.ts') ? { path: path.join(root, 'server/src/web/no-node-host.ts') } : undefined,
    );
    build.onResolve({ filter: /^node:path$/ }, () => ({ path: require.resolve('path-browserify') }));
    build.onResolve({ filter: /^node:url$/ }, () => ({ path: path.join(root, 'server/src/web/node-url.ts') }));
    build.onResolve({ filter: /^oomguard:shipped$/ }, () => ({ path: 'shipped', namespace: 'oomguard-shipped' }));
    build.onLoad({ filter: /.*/, namespace: 'oomguard-shipped' }, () => {
      const queries = {};
      for (const file of fs.readdirSync(queriesDir).filter((f) => f.endsWith('.scm')).sort()) {
        queries[file.slice(0, -4)] = fs.readFileSync(path.join(queriesDir, file), 'utf8');
      }
      const l10n = {};
      for (const file of fs.readdirSync(path.join(root, 'l10n')).sort()) {
        const match = /^bundle\.l10n\.(.+)\.json$/.exec(file);
        if (match) l10n[match[1]] = JSON.parse(fs.readFileSync(path.join(root, 'l10n', file), 'utf8'));
      }
      return {
        contents: `export const queries = ${JSON.stringify(queries)};\nexport const l10n = ${JSON.stringify(l10n)};\n`,
        loader: 'js',
        watchFiles: [...Object.keys(queries).map((name) => path.join(queriesDir, `${name}.scm`))],
      };
    });
  },
};
const webCommon = { ...common, platform: 'browser', target: 'es2022', plugins: [webTreeSitterCjs, webPlatform] };
await Promise.all([
  esbuild.build({
    ...webCommon,
    format: 'iife',
    entryPoints: [path.join(root, 'server/src/web/worker-server.ts')],
    outfile: path.join(dist, 'web', 'server.js'),
    // web-tree-sitter's Node branches require these; a worker never takes them.
    external: ['fs', 'fs/promises', 'path', 'module', 'url'],
    define: { 'process.env': '{}' },
  }),
  esbuild.build({
    ...webCommon,
    // VS Code's browser extension host loads a CommonJS module and provides `vscode`.
    format: 'cjs',
    entryPoints: [path.join(root, 'extension/src/web/extension.ts')],
    outfile: path.join(dist, 'web', 'extension.js'),
    external: ['vscode'],
  }),
]);

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
