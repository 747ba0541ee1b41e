// Owns the tree-sitter runtime: loads the two .wasm files once and parses Python.
// Positions from web-tree-sitter count UTF-16 code units when it is given a JS string,
// which is exactly what LSP counts, so ranges pass through without conversion.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Language, Parser, Query } from 'web-tree-sitter';
import type { Edit, Point, Tree } from 'web-tree-sitter';
import type { SyntaxNode } from './syntax-tree';
import { parseableText } from './lines';

/** The node type the analysis works on: a plain copy of tree-sitter's tree (see syntax-tree.ts). */
export type Node = SyntaxNode;
export type { Point, Tree, Query };

let languagePromise: Promise<Language> | undefined;

/** Finds a file that the bundle ships beside itself (dist/) or that node_modules holds (tests run from source). */
function locateWasm(fileName: string, packageName: string): string {
  const candidates = [
    path.join(__dirname, fileName),
    path.join(__dirname, '..', 'dist', fileName),
  ];
  for (const candidate of candidates) {
    if (fs.existsSync(candidate)) return candidate;
  }
  // Running from source (tests): the package in node_modules. Its package.json may not be exported, so
  // resolve its entry point and walk up to the folder that holds the file.
  let dir = path.dirname(require.resolve(packageName, { paths: [__dirname, process.cwd()] }));
  while (!fs.existsSync(path.join(dir, fileName)) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.join(dir, fileName);
}

/** Loads tree-sitter and the Python grammar once per process. */
export function loadPython(): Promise<Language> {
  languagePromise ??= (async () => {
    const runtimeWasm = locateWasm('tree-sitter.wasm', 'web-tree-sitter');
    await Parser.init({ locateFile: () => runtimeWasm });
    loadedLanguage = await Language.load(locateWasm('tree-sitter-python.wasm', 'tree-sitter-python'));
    return loadedLanguage;
  })();
  return languagePromise;
}

let sharedParser: Parser | undefined;

/** A parser for Python; the language must have been loaded with loadPython(). */
export async function pythonParser(): Promise<Parser> {
  const language = await loadPython();
  if (!sharedParser) {
    sharedParser = new Parser();
    sharedParser.setLanguage(language);
  }
  return sharedParser;
}

/** Parses a whole file (CLI, tests). Returns undefined only if tree-sitter gives up. */
export async function parsePython(text: string, previous?: Tree): Promise<Tree | undefined> {
  const parser = await pythonParser();
  return parser.parse(parseableText(text), previous) ?? undefined;
}

let loadedLanguage: Language | undefined;

/**
 * Compiles a query synchronously; the language must be loaded (it is whenever a tree exists). Strict: a query
 * with an unknown node type or field fails here, at its first use, rather than matching nothing.
 */
export function compileQuerySync(source: string): Query {
  if (!loadedLanguage) throw new Error('the Python grammar is not loaded yet');
  return new Query(loadedLanguage, source);
}

export type { Edit };
