// Which documents the language server reads: the entry point decides (extension.ts: file: and untitled: scripts;
// web/extension.ts: the schemes of web workspaces too), and every feature of the client (the memory panel) asks here.
import * as vscode from 'vscode';
import type { DocumentSelector } from 'vscode-languageclient';

/** The Python cells of Jupyter notebooks, which the server reads as one program per notebook. */
const NOTEBOOK_CELLS = { notebook: 'jupyter-notebook', language: 'python' } as const;

let schemes: readonly string[] = ['file', 'untitled'];

export function serveSchemes(served: readonly string[]): void {
  schemes = served;
}

/** The language client's document selector. */
export function documentSelector(): DocumentSelector {
  const files = schemes.map((scheme) => ({ scheme, language: 'python' }));
  // The server declares notebook sync for the cells, so the client sends them as notebooks (notebookDocument/*), and
  // diagnostics, quick fixes, CodeLens and hovers work per cell.
  return [...files, NOTEBOOK_CELLS];
}

/** A Python script, or a Python cell of a notebook (the server answers for its notebook, in the cell's lines). */
export function isServed(document: vscode.TextDocument | undefined): document is vscode.TextDocument {
  if (document?.languageId !== 'python') return false;
  if (document.uri.scheme === 'vscode-notebook-cell') return true;
  return schemes.includes(document.uri.scheme);
}
