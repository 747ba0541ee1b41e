// Precision and recall of every rule on the labelled corpus of realistic training scripts (test/corpus).
// The target from the tracker is 0.97 for both; `node --import tsx scripts/score-corpus.ts --verbose` lists
// each false or missed finding.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scoreCorpus } from '../../scripts/score-corpus';

test('rules reach precision and recall >= 0.97 on the labelled corpus', async () => {
  const { scores, mistakes } = await scoreCorpus();
  for (const score of scores) {
    const labelled = score.truePositives + score.falseNegatives;
    assert.ok(labelled > 0, `${score.code}: the corpus has no labelled case`);
    assert.ok(score.precision >= 0.97 && score.recall >= 0.97,
      `${score.code}: precision ${score.precision.toFixed(3)}, recall ${score.recall.toFixed(3)}\n${mistakes.filter((m) => m.includes(score.code)).join('\n')}`);
  }
});
