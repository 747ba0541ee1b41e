// Two readings of models trained together and of inputs a helper makes (issue #13, held-out set 10): a gradient
// penalty's create_graph derivative grows only the penalised model's forwards, with that model's own activations;
// and a step input computed in a `for step in range(n)` loop by a helper (a spectrogram from torch.stft) is read by
// replaying the body, never replaced by an assumed length.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateText, fixturesDir } from './helpers';

const fixture = (name: string): { text: string; file: string } => {
  const file = path.join(fixturesDir, 'penalised-critic-and-spectrogram', name);
  return { text: fs.readFileSync(file, 'utf8'), file };
};

test('a gradient penalty on the critic grows the critic\'s forwards only, with its LeakyReLU', async () => {
  const { text, file } = fixture('critic_penalty.py');
  const result = await estimateText(text, file);
  // The generator (ReLU, Tanh) is trained beside the penalised critic (LeakyReLU only): LeakyReLU's figures.
  assert.equal(result.config.inputDerivativeActivation, 'leaky_relu');
  // The critic runs on the fake batch, the real batch and, inside the helper, the mixed batch: three forwards.
  assert.equal(result.config.inputDerivativeModelForwards, 3);
  const share = result.config.inputDerivativeShare!;
  assert.ok(share > 0.1 && share < 0.9, String(share));
  assert.ok(result.assumptions.some((a) => /through a forward of Judge, which runs 3 times/.test(a)), result.assumptions.join('\n'));
  // The same step with a derivative that keeps no graph: one forward of each model, nothing grown. With the graph,
  // what is kept is (1 + share x (2 more forwards + (1.5 - 1) for LeakyReLU's derivative)) of that: per layer its
  // forward keeps 2 tensors (its input, the next layer's input) and the gradient 1 (the conv's output gradient).
  const plain = await estimateText(text.replace('create_graph=True', 'create_graph=False'), 'critic_plain.py');
  assert.equal(plain.config.inputDerivativeOrder, undefined);
  const ratio = result.breakdown!.activations / plain.breakdown!.activations;
  assert.ok(Math.abs(ratio - (1 + 2.5 * share)) < 0.05 * (1 + 2.5 * share), `${ratio} vs ${1 + 2.5 * share}`);
});

test('a spectrogram a helper makes with torch.stft in a range loop: its frames are the Conv1d input\'s length', async () => {
  const { text, file } = fixture('spectrogram_upsampler.py');
  const result = await estimateText(text, file);
  // 16,384 samples at hop 128, centred: 129 frames; found where the step calls the model, no length assumed.
  assert.equal(result.detected.seqLen?.value, 129);
  assert.ok(!result.assumptions.some((a) => /not found in the script/.test(a)), result.assumptions.join('\n'));
  // Twice the segment: twice the frames, and the activations with them.
  const longer = await estimateText(text.replace('SEGMENT = 16384', 'SEGMENT = 32768'), 'spectrogram_longer.py');
  assert.equal(longer.detected.seqLen?.value, 257);
  const ratio = longer.breakdown!.activations / result.breakdown!.activations;
  assert.ok(ratio > 1.9 && ratio < 2.1, String(ratio));
});

test('GAN parts traced on the inputs the step makes take no assumed image size', async () => {
  // The upsampler beside a 2-D critic of its waveform folded into frames: each traced on its own step input.
  const { text } = fixture('spectrogram_upsampler.py');
  const critic = text
    .replace('def log_spec(', `class FrameCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 32, (5, 1), (3, 1), padding=(2, 0))
        self.post = nn.Conv2d(32, 1, (3, 1), padding=(1, 0))

    def forward(self, x):
        b, c, t = x.shape
        return self.post(F.leaky_relu(self.conv(x.view(b, c, t // 4, 4)), 0.1)).flatten(1)


def log_spec(`)
    .replace('    opt = torch.optim.Adam(net.parameters(), 2e-4)', `    critic = FrameCritic().cuda()
    opt = torch.optim.Adam(list(net.parameters()) + list(critic.parameters()), 2e-4)`)
    .replace('        loss = F.l1_loss(out.squeeze(1)[:, :SEGMENT], wave)', `        clip = out[:, :, :SEGMENT]
        score = critic(clip)
        loss = F.l1_loss(out.squeeze(1)[:, :SEGMENT], wave) + score.mean()`);
  const result = await estimateText(critic, 'spectrogram_critic.py');
  assert.match(result.detected.model.name ?? '', /Upsampler \+ FrameCritic|FrameCritic \+ Upsampler/);
  assert.ok(!result.assumptions.some((a) => /not found in the script/.test(a)), result.assumptions.join('\n'));
});

