// The extension in VS Code's Node extension host: the language server runs as a Node process (dist/server.js).
import * as vscode from 'vscode';
import { LanguageClient, TransportKind } from 'vscode-languageclient/node';
import type { ServerOptions } from 'vscode-languageclient/node';
import { SERVER_NODE_ARGS } from '../../server/src/launch-args';
import { activateWith, deactivate } from './client';

export { deactivate };

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  await activateWith(context, async (context, options, name) => {
    const serverModule = vscode.Uri.joinPath(context.extensionUri, 'dist', 'server.js').fsPath;
    const serverOptions: ServerOptions = {
      run: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: [...SERVER_NODE_ARGS] } },
      debug: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: [...SERVER_NODE_ARGS, '--nolazy', '--inspect=6019'] } },
    };
    return new LanguageClient('oomguard', name, serverOptions, options);
  }, () => ({ server: vscode.Uri.joinPath(context.extensionUri, 'dist', 'server.js').fsPath, runtime: `Node ${process.version}` }));
}
