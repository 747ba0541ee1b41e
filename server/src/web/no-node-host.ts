// Stands in for node-host.ts in the web worker's bundle (scripts/build.mjs), which must not carry Node's modules:
// the worker's entry point sets its own host before anything asks for one.
import type { Host } from '../host';

export function nodeHost(): Host {
  throw new Error('OOM Guard runs in a web worker here: its entry point sets the host (web/worker-server.ts)');
}
