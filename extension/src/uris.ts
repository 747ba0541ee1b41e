// URI helpers that work wherever the extension runs: Node's path module is not there in VS Code for the Web.
import type * as vscode from 'vscode';

/** The last segment of a URI's path (`train.py`), for titles and messages. */
export function baseName(uri: vscode.Uri): string {
  return uri.path.slice(uri.path.lastIndexOf('/') + 1);
}
