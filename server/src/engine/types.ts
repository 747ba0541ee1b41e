// Plain data types shared by the engine, the language server, the CLI and the panel.
// Positions are 0-based and count UTF-16 code units, as LSP does; the CLI adds 1 when it prints.

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export type Severity = 'error' | 'warning' | 'information' | 'hint';

export interface TextEdit {
  range: Range;
  newText: string;
}

/** One way to resolve a finding. `safe` fixes cannot change what the program computes; only they run under --fix. */
export interface Fix {
  title: string;
  safe: boolean;
  preferred?: boolean;
  edits: TextEdit[];
}

/**
 * What a leak keeps alive per batch: a forward's autograd graph with its saved activations, the output tensor
 * (logits), or one element of a returned tuple (`logits, attn = model(x)` keeping `attn`: `output[1]`).
 */
/** `module:<path>`: the output of the model's submodule at that path (`layer1`), kept by a forward hook. */
export type KeptMemory = 'graph' | 'output' | `output[${number}]` | `module:${string}`;

export interface Finding {
  code: string;
  name: string;
  severity: Severity;
  range: Range;
  message: string;
  fixes: Fix[];
  /** Bytes kept per batch, where the analysis was given sizes (the server passes the memory estimate's). */
  sizeHint?: { keeps: KeptMemory; bytes: number };
  /**
   * A finding that says what it keeps: its message without a size, and how many rows above it its batch loop
   * starts (the same wherever its statement moves), so that new sizes rewrite it without the rule (resized).
   */
  keeps?: { kind: KeptMemory; unsizedMessage: string; loopRowsAbove?: number; forwards?: number };
}
