// Renders docs/images/icon.svg to the 128x128 PNG the Marketplace shows (package.json "icon"), with Debian's
// chromium through playwright-core. Usage: node --import tsx scripts/render-icon.ts
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const root = path.dirname(__dirname);
const svg = fs.readFileSync(path.join(root, 'docs', 'images', 'icon.svg'), 'utf8');
async function main(): Promise<void> {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator('svg').screenshot({ path: path.join(root, 'docs', 'images', 'icon.png'), omitBackground: true });
  await browser.close();
}

void main();
