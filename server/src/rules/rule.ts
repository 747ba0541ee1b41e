// What a rule module provides, and what it receives: the shared semantic model of one document version.
import type { NodeListKind, SemanticModel } from '../engine/semantic/model';
import type { Node } from '../engine/parser';
import type { Fix, KeptMemory } from '../engine/types';
import type { CellRows } from '../engine/notebook';
import type { Code, RuleCode } from './codes';
import type { TextLike } from '../engine/piece-text';

/** RuleContext.regionNodes: one of the model's whole-file lists by kind, or any list of nodes in document order. */
export interface RegionNodes {
  (kind: NodeListKind): readonly Node[];
  <T extends Node>(nodes: readonly T[]): readonly T[];
}

export interface RuleContext {
  model: SemanticModel;
  /**
   * The document's text: an edited document's as pieces (engine/piece-text.ts), which lineEnding and indentUnit read
   * without making the whole string; a fix that needs it whole asks wholeText.
   */
  text: TextLike;
  /**
   * Whether a candidate lies in the part of the file being analysed (incremental analysis checks only the
   * changed statements). Rules skip candidates outside it before any costly question; reports outside are dropped.
   */
  inRegion: (node: Node) => boolean;
  /**
   * The nodes of one of the model's document-ordered lists (named by kind, such as 'assignments', or given, such as
   * model.callsNamed('step')) that lie in the region: the whole list for the whole file. A rule that looks only at
   * candidates in the region walks these, not the list (a list named by kind is then not made for the whole file).
   */
  regionNodes: RegionNodes;
  /**
   * Whether the file's text contains a word: a rule whose query or candidates need a keyword asks this first. Counted
   * statement by statement and carried from version to version (SemanticModel.spells), where text.includes scans
   * the whole text on every edit.
   */
  spells: (word: string) => boolean;
  /** The top-level statements being analysed, or undefined for the whole file (for model.queryMatches). */
  region: readonly Node[] | undefined;
  /** In a Jupyter notebook, the program rows of each code cell (engine/notebook.ts); undefined for a .py file. */
  cells: readonly CellRows[] | undefined;
}

/** A finding as a rule reports it: the node it is reported at, its message and the fixes it offers. */
export interface RuleReport {
  node: Node;
  message: string;
  fixes?: Fix[];
  /** What the reported leak keeps per batch, so that the analysis can add its size when one is known. */
  keeps?: KeptMemory;
  /** A kept graph made by more than one forward pass of the model (each kept with its saved activations). */
  keptForwards?: number;
}

export interface Rule extends RuleCode {
  code: Code;
  /** The rule reports only in Jupyter notebooks (its check returns nothing when `cells` is undefined). */
  notebookOnly?: boolean;
  check(context: RuleContext): RuleReport[];
}
