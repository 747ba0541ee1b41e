// Builds the .vsix exactly as `npm run package` does (the same vsce command line, read from package.json) into a
// path of the caller's choosing, and lists what a .vsix (a zip archive) holds without unpacking it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');

/** The arguments after `vsce` in the package script, with the output path replaced by `outFile`. */
export function vsceArguments(outFile: string): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const script = manifest.scripts?.package ?? '';
  const command = script.split('&&').map((part) => part.trim()).find((part) => part.startsWith('vsce package'));
  if (!command) throw new Error(`package.json scripts.package has no "vsce package" step: ${JSON.stringify(script)}`);
  const args = command.split(/\s+/).slice(1);
  const out = args.findIndex((arg) => arg === '-o' || arg === '--out');
  if (out >= 0) args.splice(out, 2);
  return [...args, '--out', outFile];
}

/** Packages dist/ (which must be built) into `outFile`; throws with vsce's output when it fails. */
export function packageVsix(outFile: string): void {
  for (const bundle of ['dist/extension.js', 'dist/server.js']) {
    if (!fs.existsSync(path.join(repoRoot, bundle))) throw new Error(`${bundle} is missing: run "npm run build" first`);
  }
  const vsce = path.join(repoRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
  const result = spawnSync(process.execPath, [vsce, ...vsceArguments(outFile)], { cwd: repoRoot, encoding: 'utf8' });
  if (result.status !== 0 || !fs.existsSync(outFile)) {
    throw new Error(`vsce package failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
}

export interface ZipEntry {
  name: string;
  compressedSize: number;
  size: number;
}

/** Reads a zip's central directory (a .vsix is never large enough to need zip64). */
export function zipEntries(file: string): ZipEntry[] {
  const data = fs.readFileSync(file);
  // The end-of-central-directory record is the last 22 bytes plus an optional comment of up to 64 KiB.
  let end = -1;
  for (let i = data.length - 22; i >= Math.max(0, data.length - 22 - 0xffff); i--) {
    if (data.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error(`${file} is not a zip archive (no end-of-central-directory record)`);
  const count = data.readUInt16LE(end + 10);
  let offset = data.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (data.readUInt32LE(offset) !== 0x02014b50) throw new Error(`${file}: broken central directory at entry ${i}`);
    const nameLength = data.readUInt16LE(offset + 28);
    const extraLength = data.readUInt16LE(offset + 30);
    const commentLength = data.readUInt16LE(offset + 32);
    entries.push({
      name: data.toString('utf8', offset + 46, offset + 46 + nameLength),
      compressedSize: data.readUInt32LE(offset + 20),
      size: data.readUInt32LE(offset + 24),
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
