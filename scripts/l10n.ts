// Localization bundles. Every user-facing string is a literal first argument of `t(...)` (server, CLI, engine)
// or `vscode.l10n.t(...)` (extension). This script finds them with the TypeScript parser and writes
// l10n/bundle.l10n.json (English, the default); translators fill l10n/bundle.l10n.<locale>.json.
// Usage: node --import tsx scripts/l10n.ts [--write]
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

export const repoRoot = path.resolve(__dirname, '..');
export const bundleDir = path.join(repoRoot, 'l10n');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

export interface ExtractResult {
  messages: Map<string, string>; // message -> first place it is used
  problems: string[];
}

function isLocalizeCall(node: ts.CallExpression): boolean {
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return callee.text === 't';
  // vscode.l10n.t(...) and l10n.t(...)
  return ts.isPropertyAccessExpression(callee) && callee.name.text === 't' &&
    (ts.isIdentifier(callee.expression) ? callee.expression.text === 'l10n' : ts.isPropertyAccessExpression(callee.expression) && callee.expression.name.text === 'l10n');
}

export function extractMessages(): ExtractResult {
  const messages = new Map<string, string>();
  const problems: string[] = [];
  const files = [...sourceFiles(path.join(repoRoot, 'server', 'src')), ...sourceFiles(path.join(repoRoot, 'extension', 'src'))];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    // The wrapper itself forwards a variable.
    if (!/\bt\(/.test(text) || file.endsWith(path.join('server', 'src', 'l10n.ts'))) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && isLocalizeCall(node) && node.arguments.length > 0) {
        const first = node.arguments[0]!;
        const where = `${path.relative(repoRoot, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
        if (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first)) {
          if (!messages.has(first.text)) messages.set(first.text, where);
        } else {
          problems.push(`${where}: the message is not a string literal, so it cannot be translated`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { messages, problems };
}

export function placeholders(message: string): string[] {
  return [...message.matchAll(/\{(\d+)\}/g)].map((match) => match[0]).sort();
}

if (require.main === module) {
  const { messages, problems } = extractMessages();
  for (const problem of problems) console.error(problem);
  const bundle = Object.fromEntries([...messages.keys()].sort().map((key) => [key, key]));
  if (process.argv.includes('--write')) {
    fs.mkdirSync(bundleDir, { recursive: true });
    fs.writeFileSync(path.join(bundleDir, 'bundle.l10n.json'), JSON.stringify(bundle, null, 2) + '\n');
  }
  console.log(`${messages.size} messages${problems.length ? `, ${problems.length} problems` : ''}`);
}
