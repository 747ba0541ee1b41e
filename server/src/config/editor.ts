// The analysis options of one open document: the editor's oomguard.rules.* settings layered over the
// [tool.oomguard] table of the nearest pyproject.toml. Settings that are set win in the editor; the CLI reads
// pyproject.toml alone.
import { fileURLToPath } from 'node:url';
import type { AnalysisOptions } from '../engine/analyze';
import type { Settings } from '../protocol';
import { ConfigLoader, layer, optionsForFile } from './pyproject';
import type { RuleConfig } from './pyproject';

export function settingsRuleConfig(settings: Settings): RuleConfig {
  return {
    select: settings.rules.select,
    ignore: settings.rules.ignore,
    severity: settings.rules.severity,
    perFileIgnores: settings.rules.perFileIgnores,
  };
}

export class EditorConfiguration {
  private readonly loader = new ConfigLoader(false);
  private readonly reported = new Set<string>();

  /** `report` hears each distinct pyproject.toml problem once per session (a broken file gives one message). */
  constructor(private readonly report: (message: string) => void) {}

  optionsFor(uri: string, settings: Settings): Pick<AnalysisOptions, 'select' | 'ignore' | 'severity'> {
    const fromSettings = settingsRuleConfig(settings);
    // Unsaved (untitled:) and remote documents have no pyproject.toml to read.
    if (!uri.startsWith('file:')) return optionsForFile(fromSettings, '/', '');
    let file: string;
    try {
      file = fileURLToPath(uri);
    } catch {
      return optionsForFile(fromSettings, '/', '');
    }
    const project = this.loader.forFile(file);
    if (project.error && !this.reported.has(project.error)) {
      this.reported.add(project.error);
      this.report(project.error);
    }
    return optionsForFile(layer(fromSettings, project.config), project.root, file);
  }
}
