// The V8 flags of the Node language server, in one list: the launcher (node-launcher.ts) sets them before it
// compiles the server's bundle, because V8 accepts a code cache only under the flags it was made with, and
// node-server.ts sets them again (no change then) for a server started without the launcher.
import * as v8 from 'node:v8';

const SERVER_V8_FLAGS = [
  // V8 doubles the young generation each time many objects survive a scavenge, as a document's syntax copy and
  // semantic model do while they are built, up to two 16 MiB semi-spaces that stay resident afterwards (a third of
  // the server's memory with one 5,000-line script open). A server that idles between edits keeps it at its first
  // size: a few more scavenges, about 30 MiB less resident memory.
  '--semi-space-growth-factor=1',
  // `gc` of a new context (node-server.ts); the server's own context keeps no global `gc`.
  '--expose-gc',
];

export function setServerV8Flags(): void {
  for (const flag of SERVER_V8_FLAGS) v8.setFlagsFromString(flag);
}
