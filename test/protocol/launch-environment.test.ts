// The server is started with glibc's mmap threshold fixed (launch-args.ts), by the extension and by the tests that
// start it as the extension does; a user's own malloc settings are kept.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';
import { serverEnvironment } from '../../server/src/launch-args';
import { startServer } from '../helpers/lsp-client';

test('the malloc setting is added to the tunables the environment has, and a threshold set by the user stands', () => {
  assert.deepEqual(serverEnvironment({}), { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=1048576' });
  assert.deepEqual(serverEnvironment({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }), { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=1048576' });
  assert.deepEqual(serverEnvironment({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' }), {});
});

test('a server started as the extension starts it has the setting in its environment', { skip: process.platform !== 'linux' }, async () => {
  const client = await startServer();
  try {
    const environment = fs.readFileSync(`/proc/${client.child.pid}/environ`, 'utf8').split('\0');
    assert.ok(environment.some((entry) => entry.startsWith('GLIBC_TUNABLES=') && entry.includes('glibc.malloc.mmap_threshold=1048576')), environment.find((entry) => entry.startsWith('GLIBC_TUNABLES')));
  } finally {
    await client.close();
  }
});
