// The data files the web worker cannot read from a disk, put into its bundle by scripts/build.mjs.
declare module 'oomguard:shipped' {
  /** The rules' tree-sitter queries (server/src/rules/queries/*.scm), by name. */
  export const queries: Record<string, string>;
  /** The server's translations (l10n/bundle.l10n.<name>.json), by bundle name (`zh-cn`). */
  export const l10n: Record<string, Record<string, string>>;
}
