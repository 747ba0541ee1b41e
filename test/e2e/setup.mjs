// Installs the real clients the end-to-end tests drive (code-server 4.100.3 and playwright-core) into
// test/e2e/node_modules. Idempotent: does nothing when the pinned versions are already there, so CI can cache
// test/e2e/node_modules (or ~/.npm, keyed on test/e2e/package-lock.json) and skip the install (42-114 s measured on 2 cores).
// Usage: node test/e2e/setup.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const manifest = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));
const wanted = manifest.dependencies;

function installedVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

const isCI = process.env.CI === 'true';

/** Locally a missing prerequisite only means the VS Code e2e tests skip (and say why); under CI=true it fails. */
function cannotInstall(message) {
  console.error(`setup: ${message}`);
  if (isCI) process.exit(1);
  console.error('setup: not CI, so the VS Code e2e tests will skip');
  process.exit(0);
}

const missing = Object.entries(wanted).filter(([name, version]) => installedVersion(name) !== version);
if (missing.length === 0) {
  console.log(`e2e clients present: ${Object.entries(wanted).map(([n, v]) => `${n}@${v}`).join(', ')}`);
  process.exit(0);
}
// Without a browser code-server has nobody to serve; spare the install.
const browser = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => fs.existsSync(p));
if (!browser || !fs.existsSync(browser)) cannotInstall('chromium is missing (apt-get install -y chromium)');

// code-server pulls @vscode/ripgrep, whose post-install downloads a ripgrep binary from GitHub; it looks in a cache
// under the temp directory first, so seed that cache with the system's ripgrep (Debian package `ripgrep`).
const rg = ['/usr/bin/rg', '/usr/local/bin/rg'].find((candidate) => fs.existsSync(candidate));
if (!rg) cannotInstall('ripgrep is missing (apt-get install -y ripgrep); code-server cannot be installed offline without it');
const tmp = path.join(here, '.work', 'tmp');
const rgStage = path.join(here, '.work', 'rg');
fs.mkdirSync(rgStage, { recursive: true });
fs.copyFileSync(rg, path.join(rgStage, 'rg'));
const arch = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-gnu' }[process.arch];
if (!arch) cannotInstall(`no ripgrep asset name known for ${process.arch}`);
// code-server 4.100.3 pins @vscode/ripgrep 1.15.11, which names its cache folder after its own version and the
// tarball after the ripgrep release it would download (v13.0.0-10).
const cache = path.join(tmp, 'vscode-ripgrep-cache-1.15.11');
const tarball = path.join(cache, `ripgrep-v13.0.0-10-${arch}.tar.gz`);
fs.mkdirSync(cache, { recursive: true });
if (!fs.existsSync(tarball)) execFileSync('tar', ['czf', tarball, '-C', rgStage, 'rg']);

const started = Date.now();
const lock = fs.existsSync(path.join(here, 'package-lock.json'));
console.log(`setup: installing ${missing.map(([n, v]) => `${n}@${v}`).join(', ')} into test/e2e/node_modules (${lock ? 'npm ci' : 'npm install'}) ...`);
const result = spawnSync('npm', [lock ? 'ci' : 'install', '--no-audit', '--no-fund', '--foreground-scripts'], {
  cwd: here,
  stdio: 'inherit',
  env: {
    ...process.env,
    TMPDIR: tmp,
    // code-server's post-install runs as root in CI containers; without these npm drops privileges and prompts.
    npm_config_unsafe_perm: 'true',
    npm_config_yes: 'true',
  },
});
if (result.status !== 0) cannotInstall(`npm exited with ${result.status}; code-server needs the Debian packages libkrb5-dev and ripgrep`);
console.log(`setup: installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
