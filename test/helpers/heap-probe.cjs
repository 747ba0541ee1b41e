// Preloaded into a server under test (node --require): on SIGUSR2 it collects garbage and writes the bytes its heap
// still uses to the file OOMGUARD_HEAP_PROBE_FILE names, so that a test can see what a closed document left behind.
const fs = require('node:fs');
const vm = require('node:vm');

process.on('SIGUSR2', () => {
  // The server sets --expose-gc at run time: a new context has `gc` (node-server.ts does the same).
  vm.runInNewContext('gc')();
  fs.writeFileSync(process.env.OOMGUARD_HEAP_PROBE_FILE, String(process.memoryUsage().heapUsed));
});
