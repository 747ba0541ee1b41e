// English messages formatted without a translation bundle (l10n.ts formatEnglish): a template given the arguments of
// its last use returns that message again, and any other arguments are formatted afresh.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { t } from '../../server/src/l10n';

test('a message is formatted again whenever an argument differs from its last use', () => {
  const template = "'{0}' is kept {1} times; {0} again.";
  const first = t(template, 'loss', 3);
  assert.equal(first, "'loss' is kept 3 times; loss again.");
  assert.equal(t(template, 'loss', 3), first);
  assert.equal(t(template, 'loss', 4), "'loss' is kept 4 times; loss again.");
  assert.equal(t(template, 'logits', 4), "'logits' is kept 4 times; logits again.");
  // Fewer arguments leave the missing placeholder as written.
  assert.equal(t(template, 'logits'), "'logits' is kept {1} times; logits again.");
  assert.equal(t(template, 'loss', 3), first);
});
