// What every server feature (code actions, estimates, CodeLens, hovers) receives from the LSP wiring.
import type { Connection } from 'vscode-languageserver';
import type { DocumentState, DocumentStore } from '../engine/documents';
import type { SemanticModel } from '../engine/semantic/model';
import type { Settings } from '../protocol';
import type { AnalysisOptions } from '../engine/analyze';

export interface ServerContext {
  connection: Connection;
  documents: DocumentStore;
  /** The document once every change queued for it is applied, or undefined if it is not open. */
  ready(uri: string): Promise<DocumentState | undefined>;
  /** The shared semantic model of the document's current version. */
  modelOf(state: DocumentState): SemanticModel | undefined;
  settingsFor(uri: string): Promise<Settings>;
  /** The display language the client asked for at initialization (e.g. `zh-cn`), if any. */
  locale(): string | undefined;
  /** The URIs of the open documents (and notebook programs). */
  openDocuments(): string[];
  /** Analyses the document again and republishes its diagnostics (after a feature's slow input has changed). */
  reanalyze(uri: string): void;
  /** The rule selection and severities for a document: VS Code settings over [tool.oomguard] in pyproject.toml. */
  analysisOptionsFor(uri: string): Promise<AnalysisOptions>;
}

/** A feature registers its LSP handlers and says which capabilities it adds. */
export interface ServerFeature {
  capabilities?: Record<string, unknown>;
  register(context: ServerContext): void;
  /** Options this feature adds to the analysis of one document version (leak sizes from the memory estimate). */
  analysisOptions?(state: DocumentState, settings: Settings): Partial<AnalysisOptions>;
  /**
   * A version's diagnostics are written out (and the work that follows them is done): a feature's slow work for
   * the version starts from here, never before, so that it cannot hold the diagnostics back.
   */
  published?(state: DocumentState): void;
  /** A document (or notebook program) closed: what the feature keeps for it goes. */
  closed?(uri: string): void;
}
