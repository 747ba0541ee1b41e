// The analysis options of one open document: the editor's oomguard.rules.* settings layered over the
// [tool.oomguard] table of the nearest pyproject.toml. Settings that are set win in the editor; the CLI reads
// pyproject.toml alone.
import type { AnalysisOptions } from '../engine/analyze';
import { host } from '../host';
import type { Settings } from '../protocol';
import { layer, optionsForFile } from './pyproject';
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
  private readonly reported = new Set<string>();
  /** The projects already named in the log: the pyproject.toml read, or the folder that had none. */
  private readonly logged = new Set<string>();

  /**
   * `report` hears each distinct pyproject.toml problem once per session (a broken file gives one message); `log`
   * hears once per project which pyproject.toml the rules came from, for the output channel.
   */
  constructor(private readonly report: (message: string) => void, private readonly log: (message: string) => void = () => undefined) {}

  /** Asynchronous: the host looks the pyproject.toml up on disk (Node) or through the editor (a browser). */
  async optionsFor(uri: string, settings: Settings): Promise<Pick<AnalysisOptions, 'select' | 'ignore' | 'severity'>> {
    const fromSettings = settingsRuleConfig(settings);
    const project = await host().projectConfig(uri);
    // Unsaved (untitled:) documents, and documents no pyproject.toml can be looked up for: the settings alone.
    if (!project) return optionsForFile(fromSettings, '/', '');
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
    return optionsForFile(layer(fromSettings, project.config), project.root, project.document);
  }
}
