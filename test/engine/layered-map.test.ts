// A map made over the previous version's (engine/semantic/layered-map.ts) must answer as a copy of it would, through
// any number of versions (flattened every few), and the earlier versions, left alone, keep answering as they did.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LayeredMap } from '../../server/src/engine/semantic/layered-map';

test('versions of a map made over one another answer as copies would, after each of 600 changes', () => {
  let seed = 3;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  let layered = new LayeredMap<string, number>();
  let copy = new Map<string, number>();
  const versions: Array<[LayeredMap<string, number>, Map<string, number>]> = [];
  for (let change = 0; change < 600; change++) {
    // A new version every few changes: over the last one, as the model derives from the previous model.
    if (change % 5 === 0) {
      versions.push([layered, copy]);
      layered = new LayeredMap(layered);
      copy = new Map(copy);
    }
    const key = `k${random(30)}`;
    const operation = random(10);
    if (operation < 6) {
      layered.set(key, change);
      copy.set(key, change);
    } else if (operation < 9) {
      assert.equal(layered.delete(key), copy.delete(key));
    } else {
      layered.clear();
      copy.clear();
    }
    for (let k = 0; k < 30; k++) {
      assert.equal(layered.get(`k${k}`), copy.get(`k${k}`), `get k${k} after change ${change}`);
      assert.equal(layered.has(`k${k}`), copy.has(`k${k}`), `has k${k} after change ${change}`);
    }
    assert.equal(layered.size, copy.size);
    assert.deepEqual([...layered].sort(), [...copy].sort());
    assert.deepEqual([...layered.keys()].sort(), [...copy.keys()].sort());
  }
  // The earlier versions, left alone since, still answer as they did.
  for (const [earlier, earlierCopy] of versions) assert.deepEqual(new Map([...earlier].sort()), new Map([...earlierCopy].sort()));
});
