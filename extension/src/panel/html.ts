// The memory panel's HTML shell. Pure (no vscode import), so the browser test loads exactly what the extension serves.
export interface PanelHtmlOptions {
  /** The webview's `cspSource` (the origin its resources load from). */
  cspSource: string;
  /** A fresh random value per page; only scripts that carry it run. */
  nonce: string;
  scriptUri: string;
  styleUri: string;
  /** BCP 47 tag of the display language. */
  lang: string;
  /** The document's title (localized): screen readers announce it, and axe-core requires one. */
  title: string;
}

function attribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function panelHtml(options: PanelHtmlOptions): string {
  const csp = [
    "default-src 'none'",
    `style-src ${options.cspSource}`,
    `script-src 'nonce-${options.nonce}'`,
    "img-src 'none'",
    "font-src 'none'",
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="${attribute(options.lang)}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attribute(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${attribute(options.title)}</title>
<link rel="stylesheet" href="${attribute(options.styleUri)}">
</head>
<body>
<main id="app" aria-live="polite"></main>
<script nonce="${attribute(options.nonce)}" src="${attribute(options.scriptUri)}"></script>
</body>
</html>`;
}

/** 32 random characters from [A-Za-z0-9], from a cryptographic source. */
export function makeNonce(random: (bytes: Uint8Array) => Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(random(new Uint8Array(32)), (byte) => alphabet[byte % alphabet.length]).join('');
}
