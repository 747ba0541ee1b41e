// node:url's two path helpers for the web worker's bundle (scripts/build.mjs maps node:url here): POSIX paths,
// which is what file: URIs carry in the places the server uses them.
export function pathToFileURL(file: string): URL {
  const url = new URL('file:///');
  // The pathname setter percent-encodes what a URL path cannot hold (spaces, '#', '?').
  url.pathname = file.replace(/%/g, '%25').replace(/#/g, '%23').replace(/\?/g, '%3F');
  return url;
}

export function fileURLToPath(url: string | URL): string {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  if (parsed.protocol !== 'file:') throw new TypeError(`The URL must be of scheme file: ${parsed.href}`);
  return decodeURIComponent(parsed.pathname);
}
