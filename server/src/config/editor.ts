// The analysis options of one open document: the editor's oomguard.rules.* settings layered over the
// [tool.oomguard] table of the nearest pyproject.toml. Settings that are set win in the editor; the CLI reads
// pyproject.toml alone.
import { fileURLToPath } from 'node:url';
import type { AnalysisOptions } from '../engine/analyze';
import type { Settings } from '../protocol';
import { ConfigLoader, layer, optionsForFile } from './pyproject';
import type { RuleConfig } from './pyproject';
import { t } from '../l10n';

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
  /** The projects already named in the log: the pyproject.toml read, or the folder that had none. */
  private readonly logged = new Set<string>();

  /**
   * `report` hears each distinct pyproject.toml problem once per session (a broken file gives one message); `log`
   * hears once per project which pyproject.toml the rules came from, for the output channel.
   */
  constructor(private readonly report: (message: string) => void, private readonly log: (message: string) => void = () => undefined) {}

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
    const key = project.file ?? project.root;
    if (!this.logged.has(key)) {
      this.logged.add(key);
      this.log(project.file
        ? t('Configuration: [tool.oomguard] of {0} under the editor settings.', project.file)
        : t('Configuration: no pyproject.toml at or above {0}; the editor settings and defaults apply.', project.root));
    }
    if (project.error && !this.reported.has(project.error)) {
      this.reported.add(project.error);
      this.report(project.error);
    }
    return optionsForFile(layer(fromSettings, project.config), project.root, file);
  }
}
