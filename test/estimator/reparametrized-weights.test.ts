// Two things a GAN vocoder's step keeps that its layers' activations do not show (issue #13, held-out set 10):
// weight_norm / spectral_norm make each layer's weight anew at every call and the layer keeps it for backward (a
// critic run on real and generated audio keeps two copies of its weights, whatever the batch), and a
// feature-matching loss over the critic's returned feature maps keeps one difference per map.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateText, fixturesDir } from './helpers';

const fixture = (name: string): { text: string; file: string } => {
  const file = path.join(fixturesDir, 'reparametrized-weights', name);
  return { text: fs.readFileSync(file, 'utf8'), file };
};

// WaveCritic's convolution weights: 1x64x15, (64/4)x256x41, (256/16)x1024x41, 1024x1024x5 and 1024x1x3.
const CRITIC_WEIGHTS = 64 * 15 + 16 * 256 * 41 + 16 * 1024 * 41 + 1024 * 1024 * 5 + 1024 * 3;
const plainCritic = (text: string): string => text.replace(/weight_norm\(nn\.Conv1d/g, '(nn.Conv1d');

test('a weight-normalized critic run twice before one backward keeps two copies of its weights', async () => {
  const { text, file } = fixture('wave_critic.py');
  const normalized = await estimateText(text, file);
  const plain = await estimateText(plainCritic(text), 'wave_critic_plain.py');
  // weight_norm adds one magnitude per output channel.
  assert.equal(normalized.detected.parameters! - plain.detected.parameters!, 64 + 256 + 1024 + 1024 + 1);
  const extra = normalized.breakdown!.activations - plain.breakdown!.activations;
  assert.equal(extra, 2 * CRITIC_WEIGHTS * 4);
});

test('the old torch.nn.utils.weight_norm and spectral_norm make their weights per call the same way', async () => {
  const { text } = fixture('wave_critic.py');
  const plain = await estimateText(plainCritic(text), 'wave_critic_plain.py');
  const old = await estimateText(text.replace('from torch.nn.utils.parametrizations import weight_norm', 'from torch.nn.utils import weight_norm'), 'wave_critic_old.py');
  assert.equal(old.breakdown!.activations - plain.breakdown!.activations, 2 * CRITIC_WEIGHTS * 4);
  const spectral = await estimateText(text.replace('import weight_norm', 'import spectral_norm as weight_norm'), 'wave_critic_spectral.py');
  assert.equal(spectral.detected.parameters, plain.detected.parameters);
  assert.equal(spectral.breakdown!.activations - plain.breakdown!.activations, 2 * CRITIC_WEIGHTS * 4);
});

test('under autocast a normalized weight is cast at every call, not once a step', async () => {
  const { text } = fixture('wave_critic.py');
  const amp = (source: string): string => source
    .replace('        loss = F.relu(', '        with torch.autocast("cuda", dtype=torch.bfloat16):\n            loss = F.relu(');
  const normalized = await estimateText(amp(text), 'wave_critic_amp.py');
  const plain = await estimateText(amp(plainCritic(text)), 'wave_critic_plain_amp.py');
  assert.equal(normalized.detected.precision?.value, 'bf16-amp');
  // No copy cached once a step for the normalized weights: a half copy at each of the two calls instead.
  const castOnce = (result: typeof plain): number => (result.config.model.kind === 'layers' ? result.config.model.castParameters : NaN);
  assert.equal(castOnce(normalized), 0);
  assert.equal(castOnce(plain), CRITIC_WEIGHTS);
  const extra = normalized.breakdown!.activations - plain.breakdown!.activations;
  assert.ok(extra >= (2 - 1) * CRITIC_WEIGHTS * 2 && extra <= 2 * CRITIC_WEIGHTS * 2, String(extra));
});

test('AvgPool1d is a modelled layer: no "not modelled" assumption', async () => {
  const { text } = fixture('wave_critic.py');
  const pooled = text
    .replace('        self.post = weight_norm(', '        self.pool = nn.AvgPool1d(4, 2, padding=2)\n        self.post = weight_norm(')
    .replace('        for conv in self.convs:', '        x = self.pool(x)\n        for conv in self.convs:');
  const result = await estimateText(pooled, 'wave_critic_pooled.py');
  assert.ok(!result.assumptions.some((a) => /not modelled/.test(a)), result.assumptions.join('\n'));
  // The convolutions see half the samples: less is kept than without the pooling.
  const unpooled = await estimateText(text, 'wave_critic.py');
  assert.ok(result.breakdown!.activations < unpooled.breakdown!.activations);
});

// MapCritic's feature maps for 1,024 samples: 32 x 1024, 64 x 512 and 128 x 256 per sample.
const MAPS_PER_SAMPLE = 32 * 1024 + 64 * 512 + 128 * 256;

test('a feature-matching loss over the maps a critic returns keeps one difference per map', async () => {
  const { text, file } = fixture('vocoder_feature_matching.py');
  const matched = await estimateText(text, file);
  const adversarial = await estimateText(text.replace(' + 2 * feature_matching(real_maps, fake_maps)', ''), 'vocoder_adversarial.py');
  assert.equal(matched.breakdown!.activations - adversarial.breakdown!.activations, 16 * MAPS_PER_SAMPLE * 4);
});

test('the critic called once on both clips, its maps unpacked from one tuple, keeps the same differences', async () => {
  const { text } = fixture('vocoder_feature_matching.py');
  const paired = text
    .replace('    def forward(self, x):\n        maps = []', '    def forward(self, real, fake):\n        return self.judge(real), self.judge(fake)\n\n    def judge(self, x):\n        maps = []')
    .replace('        real_score, _ = critic(wave)\n        fake_score, _ = critic(fake.detach())', '        (real_score, _), (fake_score, _) = critic(wave, fake.detach())')
    .replace('        real_score, real_maps = critic(wave)\n        fake_score, fake_maps = critic(fake)', '        (real_score, real_maps), (fake_score, fake_maps) = critic(wave, fake)');
  const matched = await estimateText(paired, 'vocoder_paired.py');
  const adversarial = await estimateText(paired.replace(' + 2 * feature_matching(real_maps, fake_maps)', ''), 'vocoder_paired_adversarial.py');
  assert.equal(matched.breakdown!.activations - adversarial.breakdown!.activations, 16 * MAPS_PER_SAMPLE * 4);
});

test('feature maps a name still holds from the critic\'s update stay alive through the generator\'s', async () => {
  const { text, file } = fixture('vocoder_feature_matching.py');
  const held = await estimateText(text, file);
  // `fake_score, _ = critic(fake.detach())`: `_` holds that call's maps after the critic's backward, until the next
  // step binds it again. Indexed instead, nothing holds them.
  const released = await estimateText(text
    .replace('        real_score, _ = critic(wave)\n        fake_score, _ = critic(fake.detach())',
      '        real_score = critic(wave)[0]\n        fake_score = critic(fake.detach())[0]'), 'vocoder_released.py');
  assert.equal(held.breakdown!.activations - released.breakdown!.activations, 16 * MAPS_PER_SAMPLE * 4);
  // Bound again before the generator's backward (here to the real clip's score), they are freed.
  const rebound = await estimateText(text.replace('        real_score, real_maps = critic(wave)', '        _, real_maps = critic(wave)'), 'vocoder_rebound.py');
  // (The critic update's `real_score`, 256 values a sample, is then the one thing its names still hold.)
  assert.equal(rebound.breakdown!.activations - released.breakdown!.activations, 16 * 256 * 4);
});

test('a GAN step of the probe\'s own models grows with the batch as the H200 measured it', async () => {
  // test/gpu/estimator/probe_hifi11.py runs gan_step_probe.py's models and step at batch 16 and 32; each row's peak
  // is over what the probe's earlier rows left allocated (before_step), so the growth between the two is compared.
  const rows = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'gpu', 'estimator', 'results', 'probe_hifi11.json'), 'utf8')) as
    { rows: Array<{ name: string; before_step?: number; peak_total?: number }> }).rows;
  const growth = (name: string): number => {
    const row = rows.find((r) => r.name === name)!;
    return row.peak_total! - row.before_step!;
  };
  const measured = growth('gan step new_wn d+g+fm B32') - growth('gan step new_wn d+g+fm');
  const { text } = fixture('gan_step_probe.py');
  const at16 = await estimateText(text, 'gan_step_16.py');
  const at32 = await estimateText(text.replace('BATCH = 16', 'BATCH = 32'), 'gan_step_32.py');
  const estimated = (at32.peakAllocated - at16.peakAllocated) / 2 ** 20;
  assert.ok(Math.abs(estimated / measured - 1) < 0.1, `${estimated.toFixed(1)} MiB estimated vs ${measured.toFixed(1)} MiB measured`);
});

test('the feature-matching loss\'s backward makes the gradients of both sides\' maps at once', async () => {
  // At batch 512 one set of maps (201 MB) outweighs the backward transients a layer net has without the loss: the
  // loss keeps one set, and its backward holds a gradient for each side's maps while freeing that set.
  const { text } = fixture('vocoder_feature_matching.py');
  const large = text.replace('BATCH = 16', 'BATCH = 512');
  const matched = await estimateText(large, 'vocoder_512.py');
  const adversarial = await estimateText(large.replace(' + 2 * feature_matching(real_maps, fake_maps)', ''), 'vocoder_512_adversarial.py');
  const maps = 512 * MAPS_PER_SAMPLE * 4;
  assert.equal(matched.breakdown!.activations - adversarial.breakdown!.activations, maps);
  const transient = matched.breakdown!.other - adversarial.breakdown!.other;
  assert.ok(transient > 0 && transient < maps, String(transient));
  assert.equal(matched.peakPhase, 'backward');
});
