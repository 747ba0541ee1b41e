// The values the server's modules take from vscode-languageserver, imported here once. The package is CommonJS:
// esbuild gives each module of the bundle that imports values from it a copy of its exports (hundreds of
// properties), which seven modules made on every start of the server, before its first diagnostics. Types are
// imported from the package itself.
export { CodeActionKind, DiagnosticSeverity, MarkupKind, RAL, ResponseError, TextDocumentSyncKind } from 'vscode-languageserver';
