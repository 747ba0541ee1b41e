// Owns the tree-sitter runtime: loads the two .wasm files once and parses Python.
// Positions from web-tree-sitter count UTF-16 code units when it is given a JS string,
// which is exactly what LSP counts, so ranges pass through without conversion.
import { Language, Parser, Query } from 'web-tree-sitter';
import type { Edit, Point, Tree } from 'web-tree-sitter';
import type { SyntaxNode } from './syntax-tree';
import { parseableText } from './lines';
import { host } from '../host';
import { useCursorRuntime } from './tree-walk';

/** The node type the analysis works on: a plain copy of tree-sitter's tree (see syntax-tree.ts). */
export type Node = SyntaxNode;
export type { Point, Tree, Query };

let languagePromise: Promise<Language> | undefined;

/** Loads tree-sitter and the Python grammar once per process. */
export function loadPython(): Promise<Language> {
  languagePromise ??= (async () => {
    // A path in Node; in a browser the bytes the client read from the extension's own URI.
    const runtimeWasm = host().wasm('tree-sitter.wasm');
    // Emscripten makes this object the runtime's module: the tree copy calls its cursor functions (tree-walk.ts).
    const module = typeof runtimeWasm === 'string' ? { locateFile: () => runtimeWasm } : { wasmBinary: runtimeWasm };
    await Parser.init(module);
    useCursorRuntime(module);
    loadedLanguage = await Language.load(host().wasm('tree-sitter-python.wasm'));
    return loadedLanguage;
  })();
  return languagePromise;
}

/** Whether this process has begun to load tree-sitter (its WebAssembly is compiled from then on). */
export function pythonLoadStarted(): boolean {
  return languagePromise !== undefined;
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

/**
 * Parses a whole file (CLI, tests). Returns undefined only if tree-sitter gives up. `progress` is called every few
 * hundred parse steps (a 20,000-line file: a few thousand times): the estimate worker pauses there while the server
 * is busy (busy-signal.ts).
 */
export async function parsePython(text: string, previous?: Tree, progress?: () => void): Promise<Tree | undefined> {
  const parser = await pythonParser();
  return parser.parse(parseableText(text), previous, progress ? { progressCallback: progress } : undefined) ?? undefined;
}

let loadedLanguage: Language | undefined;

/** The parser, once a parse has loaded it (parsePython): for the synchronous parses of the edit path. */
export function loadedParser(): Parser | undefined {
  return sharedParser;
}

/**
 * Compiles a query synchronously; the language must be loaded (it is whenever a tree exists). Strict: a query
 * with an unknown node type or field fails here, at its first use, rather than matching nothing.
 */
export function compileQuerySync(source: string): Query {
  if (!loadedLanguage) throw new Error('the Python grammar is not loaded yet');
  return new Query(loadedLanguage, source);
}

export type { Edit };
