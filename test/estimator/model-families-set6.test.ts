// Model families held-out set 6 found missing or mis-sized: torchvision's DenseNet-161, Inception v3 and GoogLeNet,
// MaxViT, the video ResNets, and Hugging Face models built from configs (Marian, SegFormer, a VisionEncoderDecoder
// joining a ViT and a GPT-2 or BERT decoder). Each is checked by its exact parameter count and by what the script
// around it decides (auxiliary heads, clip length, caption length, classes), at sizes other than the set's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findVideoModel, findVisionModel, segformer, SEGFORMER_DEFAULTS, SEGFORMER_SIZES } from '../../server/src/estimator/catalog/vision';
import type { LayerNetSpec } from '../../server/src/estimator/types';

function layers(spec: ReturnType<NonNullable<ReturnType<typeof findVisionModel>>['build']>): LayerNetSpec {
  assert.equal(spec.kind, 'layers');
  return spec as LayerNetSpec;
}

test('DenseNet-161, Inception v3, GoogLeNet and MaxViT-T have torchvision\'s exact parameter counts', () => {
  assert.equal(layers(findVisionModel('densenet161')!.build(224, 1000)).parameters, 28_681_000);
  // Inception v3 with and without its auxiliary classifier, and with a 37-class head (2048 + 768 inputs to the two heads).
  assert.equal(layers(findVisionModel('inception_v3')!.build(299, 1000)).parameters, 27_161_264);
  assert.equal(layers(findVisionModel('inception_v3')!.build(299, 1000, { auxLogits: false })).parameters, 23_834_568);
  assert.equal(layers(findVisionModel('inception_v3')!.build(299, 37)).parameters, 27_161_264 - (2048 + 768 + 2) * (1000 - 37));
  assert.equal(layers(findVisionModel('googlenet')!.build(224, 1000, { auxLogits: false })).parameters, 6_624_904);
  // Two auxiliary classifiers: a 1x1 conv to 128 (+ BatchNorm), linears 2048 -> 1024 -> classes, on 512 and 528 channels.
  const aux = (inChannels: number) => inChannels * 128 + 256 + 2048 * 1024 + 1024 + 1024 * 1000 + 1000;
  assert.equal(layers(findVisionModel('googlenet')!.build(224, 1000)).parameters, 6_624_904 + aux(512) + aux(528));
  assert.equal(layers(findVisionModel('maxvit_t')!.build(224, 1000)).parameters, 30_919_624);
  // MaxViT's last linear has no bias: 512 weights a class.
  assert.equal(layers(findVisionModel('maxvit_t')!.build(224, 10)).parameters, 30_919_624 - 990 * 512);
});

test('a DenseNet without grad holds its block\'s earlier outputs, their concatenation and the first norm\'s output at once', () => {
  const net = layers(findVisionModel('densenet161')!.build(224, 1000));
  // The first block's last layer at 56 x 56: 96 + 5 x 48 = 336 channels, three times, plus the 192-wide bottleneck.
  assert.ok(net.inferenceLiveElementsPerSample >= (3 * 336 + 4 * 48) * 56 * 56);
  // Growth 48 from 96 features holds more than DenseNet-121's growth 32 from 64.
  assert.ok(net.inferenceLiveElementsPerSample > layers(findVisionModel('densenet121')!.build(224, 1000)).inferenceLiveElementsPerSample * 1.4);
});

const inceptionScript = (builder: string) => `
import torch
import torch.nn.functional as F
from torchvision import models

net = ${builder}.cuda().train()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for _ in range(3):
    images = torch.randn(20, 3, 331, 331, device="cuda")
    target = torch.randint(0, 37, (20,), device="cuda")
    out = net(images)
    loss = F.cross_entropy(out[0], target) + 0.3 * F.cross_entropy(out[1], target)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('Inception v3 and GoogLeNet read aux_logits (and GoogLeNet drops its auxiliary heads with pretrained weights)', async () => {
  const withAux = await estimateText(inceptionScript('models.inception_v3(num_classes=37, init_weights=False)'), '/tmp/inception_aux.py');
  const without = await estimateText(inceptionScript('models.inception_v3(num_classes=37, aux_logits=False, init_weights=False)'), '/tmp/inception_noaux.py');
  assert.equal(withAux.detected.imageSize?.value, 331);
  assert.equal(withAux.detected.parameters - without.detected.parameters, 128 * 768 + 256 + 128 * 768 * 25 + 1536 + 768 * 37 + 37);
  assert.ok(withAux.peakAllocated > without.peakAllocated);
  const scratch = await estimateText(inceptionScript('models.googlenet(num_classes=37)'), '/tmp/googlenet_scratch.py');
  const pretrained = await estimateText(inceptionScript('models.googlenet(weights="IMAGENET1K_V1")'), '/tmp/googlenet_weights.py');
  assert.ok(scratch.detected.parameters > 9_000_000, `${scratch.detected.parameters}`);
  assert.equal(pretrained.detected.parameters, 6_624_904);
});

test('the video ResNets have torchvision\'s exact parameter counts', () => {
  assert.equal(findVideoModel('r3d_18')!.build(16)(112, 400).parameters, 33_371_472);
  assert.equal(findVideoModel('mc3_18')!.build(16)(112, 400).parameters, 11_695_440);
  assert.equal(findVideoModel('r2plus1d_18')!.build(16)(112, 400).parameters, 31_505_325);
  // The parameters do not depend on the clip; what is kept grows with its frames.
  const short = findVideoModel('r3d_18')!.build(8)(128, 51);
  const long = findVideoModel('r3d_18')!.build(32)(128, 51);
  assert.equal(short.parameters, long.parameters);
  assert.ok(long.savedElementsPerSample > 3.5 * short.savedElementsPerSample);
});

const clipScript = (builder: string, frames: number, side: number, framesName = 'T') => `
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models.video import ${builder.split('(')[0]}

${framesName} = ${frames}

class Clips(Dataset):
    def __len__(self):
        return 96
    def __getitem__(self, i):
        frames = torch.rand(${framesName}, ${side}, ${side}, 3)
        return frames.permute(3, 0, 1, 2), i % 51

model = ${builder}.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for clips, labels in DataLoader(Clips(), batch_size=6):
    loss = nn.functional.cross_entropy(model(clips.cuda()), labels.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a video ResNet is built for the clips its dataset returns (C, T, H, W): frames and size from the sample', async () => {
  const eight = await estimateText(clipScript('mc3_18(num_classes=51)', 8, 144), '/tmp/mc3_8.py');
  const twentyFour = await estimateText(clipScript('mc3_18(num_classes=51)', 24, 144), '/tmp/mc3_24.py');
  assert.equal(eight.unresolved, undefined);
  assert.equal(eight.detected.imageSize?.value, 144);
  assert.equal(eight.detected.parameters, 11_695_440 - 512 * (400 - 51) - (400 - 51));
  // mc3's later stages never stride the frames: three times the frames keep about three times the activations.
  const ratio = twentyFour.breakdown.activations / eight.breakdown.activations;
  assert.ok(ratio > 2.6 && ratio < 3.1, `ratio ${ratio}`);
  assert.ok(!eight.assumptions.some((a) => /frames/.test(a)));
});

test('a clip length the script names is read where the sample is not traced, and an unknown one is an assumption', async () => {
  const decoded = `
import torch
import decord
from torchvision.models.video import r2plus1d_18
clip_len = 12
model = r2plus1d_18().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for clips, labels in decord.VideoLoader(["a.mp4"], shape=(8, clip_len, 112, 112, 3)):
    loss = torch.nn.functional.cross_entropy(model(clips.cuda()), labels.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const named = (await estimateText(decoded, '/tmp/r21d_named.py')).config.model as LayerNetSpec;
  assert.equal(named.input.kind === 'image' ? named.input.frames : 0, 12);
  const noLoop = `
import torch
from torchvision.models.video import r3d_18
model = r3d_18().cuda().eval()
with torch.no_grad():
    print(model(torch.randn(4, 3, 16, 112, 112, device="cuda")).shape)
`;
  const assumed = await estimateText(noLoop, '/tmp/r3d_assumed.py');
  assert.equal(assumed.detected.parameters, 33_371_472);
  assert.ok(assumed.assumptions.some((a) => /16 frames/.test(a)), assumed.assumptions.join('\n'));
});

const marianScript = (config: string) => `
import torch
from transformers import MarianConfig, MarianMTModel

model = MarianMTModel(MarianConfig(${config})).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(4):
    src = torch.randint(0, 1000, (16, 96), device="cuda")
    tgt = torch.randint(0, 1000, (16, 80), device="cuda")
    loss = model(input_ids=src, labels=tgt).loss
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('MarianConfig builds BART\'s layers with sinusoidal position tables and no embedding norms, under MarianMTModel\'s LM head', async () => {
  const r = await estimateText(marianScript('vocab_size=32000, d_model=256, encoder_layers=3, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=1024, decoder_ffn_dim=1024, max_position_embeddings=256'), '/tmp/marian_small.py');
  assert.equal(r.unresolved, undefined);
  assert.equal(r.detected.model.source, 'from-config');
  const spec = r.config.model;
  assert.ok(spec.kind === 'transformer' && spec.task === 'seq2seq');
  const attention = 4 * (256 * 256 + 256);
  const encoderLayer = attention + 2 * 512 + (256 * 1024 + 1024) + (1024 * 256 + 256);
  const decoderLayer = encoderLayer + attention + 512;
  // One shared embedding (the head is tied to it) and one 256-row position table per stack.
  assert.equal(r.detected.parameters, 32000 * 256 + 2 * 256 * 256 + 3 * encoderLayer + 2 * decoderLayer);
  // MarianConfig() alone: 12 + 12 layers of width 1,024 over a 58,101-token vocabulary.
  const defaults = await estimateText(marianScript(''), '/tmp/marian_defaults.py');
  const wide = defaults.config.model;
  assert.ok(wide.kind === 'transformer' && wide.hidden === 1024 && wide.layers === 12 && wide.decoderLayers === 12 && wide.vocab === 58101);
});

test('SegFormer: the MiT sizes\' exact parameter counts, read from SegformerConfig(...) or a checkpoint\'s name', async () => {
  const b0 = (classes: number) => segformer({ ...SEGFORMER_DEFAULTS, ...SEGFORMER_SIZES.b0 }, 512, classes, true).parameters;
  // transformers' SegformerForSemanticSegmentation: b2 with 150 labels (ADE20K) measured on the H200 (held-out set 6).
  assert.equal(segformer({ ...SEGFORMER_DEFAULTS, ...SEGFORMER_SIZES.b2 }, 512, 150, true).parameters, 27_461_974);
  // The classifier is a 1x1 convolution from the 256-wide decoder: 257 parameters a class.
  assert.equal(b0(150) - b0(19), 131 * 257);
  const script = (build: string) => `
import torch
from transformers import SegformerConfig, SegformerForSemanticSegmentation

model = ${build}.cuda()
opt = torch.optim.AdamW(model.parameters(), lr=6e-5)
for it in range(4):
    pixel_values = torch.randn(6, 3, 384, 384, device="cuda")
    labels = torch.randint(0, 19, (6, 384, 384), device="cuda")
    out = model(pixel_values=pixel_values, labels=labels)
    opt.zero_grad()
    out.loss.backward()
    opt.step()
`;
  const fromConfig = await estimateText(script('SegformerForSemanticSegmentation(SegformerConfig(num_labels=19, depths=[2, 2, 2, 2], hidden_sizes=[64, 128, 320, 512], decoder_hidden_size=256))'), '/tmp/segformer_b1.py');
  assert.equal(fromConfig.unresolved, undefined);
  assert.equal(fromConfig.detected.parameters, segformer({ ...SEGFORMER_DEFAULTS, ...SEGFORMER_SIZES.b1 }, 384, 19, true).parameters);
  assert.equal(fromConfig.detected.imageSize?.value, 384);
  const named = await estimateText(script('SegformerForSemanticSegmentation.from_pretrained("nvidia/segformer-b0-finetuned-ade-512-512")'), '/tmp/segformer_named.py');
  assert.equal(named.detected.parameters, b0(150));
  // A bigger crop keeps more: the attention over the first stage grows with the square of its tokens / 64.
  const larger = await estimateText(script('SegformerForSemanticSegmentation(SegformerConfig(num_labels=19))').replace(/384/g, '768'), '/tmp/segformer_768.py');
  const smaller = await estimateText(script('SegformerForSemanticSegmentation(SegformerConfig(num_labels=19))'), '/tmp/segformer_384.py');
  assert.ok(larger.breakdown.activations > 3.9 * smaller.breakdown.activations);
  // A stage list the script does not determine is never replaced by the defaults.
  const unknown = await estimateText(script('SegformerForSemanticSegmentation(SegformerConfig(depths=DEPTHS))').replace('model =', 'import sys\nDEPTHS = sys.argv[1:]\nmodel ='), '/tmp/segformer_unknown.py');
  assert.ok(unknown.unresolved);
});

const captionScript = (build: string, captionLength: number) => `
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, GPT2Config, ViTConfig, VisionEncoderDecoderConfig, VisionEncoderDecoderModel

${build}

class Pairs(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        caption = torch.full((${captionLength},), -100)
        caption[:10] = 7
        return torch.randn(3, 256, 256), caption

opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for images, captions in DataLoader(Pairs(), batch_size=12):
    loss = model(pixel_values=images.cuda(), labels=captions.cuda()).loss
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a VisionEncoderDecoderModel from a ViT config and a GPT-2 config: both towers, cross-attention, the caption\'s length', async () => {
  const build = [
    'encoder = ViTConfig(image_size=256, patch_size=32, hidden_size=384, num_hidden_layers=6, num_attention_heads=6, intermediate_size=1536)',
    'decoder = GPT2Config(vocab_size=8000, n_positions=128, n_embd=512, n_layer=3, n_head=8)',
    'model = VisionEncoderDecoderModel(config=VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)).cuda()',
  ].join('\n');
  const r = await estimateText(captionScript(build, 40), '/tmp/ved_small.py');
  assert.equal(r.unresolved, undefined);
  assert.match(r.detected.model.name ?? '', /VisionEncoderDecoderModel/);
  // ViTModel with its pooler: patch conv, class token, 65 positions, 6 blocks, final norm, pooler.
  const vitBlock = 4 * (384 * 384 + 384) + (384 * 1536 + 1536) + (1536 * 384 + 384) + 4 * 384;
  const vit = 3 * 32 * 32 * 384 + 384 + 384 + 65 * 384 + 6 * vitBlock + 2 * 384 + 384 * 384 + 384;
  // GPT-2 with cross-attention: each block adds q / kv / out projections and a norm; tied head; 384 -> 512 projection.
  const gptBlock = 12 * 512 * 512 + 13 * 512;
  const cross = 4 * (512 * 512 + 512) + 2 * 512;
  const gpt = 8000 * 512 + 128 * 512 + 3 * (gptBlock + cross) + 2 * 512;
  assert.equal(r.detected.parameters, vit + gpt + 384 * 512 + 512);
  assert.equal(r.detected.seqLen?.value, 40);
  const longer = await estimateText(captionScript(build, 120), '/tmp/ved_longer.py');
  assert.equal(longer.detected.seqLen?.value, 120);
  assert.ok(longer.breakdown.activations > r.breakdown.activations);
});

test('VisionEncoderDecoderModel from two catalog checkpoints, and never one of its configs alone', async () => {
  const pretrained = await estimateText(captionScript('model = VisionEncoderDecoderModel.from_encoder_decoder_pretrained("google/vit-base-patch16-224-in21k", "gpt2").cuda()', 32), '/tmp/ved_pretrained.py');
  // ViT-B/16 with its pooler, GPT-2 small, and 12 cross-attentions of width 768 with their norms.
  assert.equal(pretrained.detected.parameters, 86_389_248 + 124_439_808 + 12 * (4 * (768 * 768 + 768) + 1536));
  // A decoder family it does not join: unresolved, not the GPT-2 config built before it.
  const build = [
    'encoder = ViTConfig()',
    'decoder = GPT2Config(n_layer=2)',
    'other = VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder, unknown_decoder)',
    'model = VisionEncoderDecoderModel(config=other).cuda()',
  ].join('\n');
  const unresolved = await estimateText(captionScript(build, 32), '/tmp/ved_unknown.py');
  assert.ok(unresolved.unresolved, `${unresolved.detected.model.name}`);
});

const rerunScript = (second: string) => `
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models import resnet18

data = TensorDataset(torch.randn(256, 3, 160, 160), torch.randint(0, 10, (256,)))
model = resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def one_epoch(loader):
    for x, y in loader:
        loss = F.cross_entropy(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()

loader = DataLoader(data, batch_size=16)
one_epoch(loader)
${second}
`;

test('a training function run again on a loader rebuilt with a larger batch is estimated at that batch; an evaluation loader is not', async () => {
  const rerun = await estimateText(rerunScript('loader = DataLoader(data, batch_size=64)\none_epoch(loader)'), '/tmp/rerun_bigger.py');
  assert.equal(rerun.detected.batchSize?.value, 64);
  assert.ok(rerun.assumptions.some((a) => /batch size 16/.test(a)), rerun.assumptions.join('\n'));
  // Rebuilt but never trained on again, or a differently named loader for evaluation: the training batch stays.
  const notRun = await estimateText(rerunScript('loader = DataLoader(data, batch_size=64)'), '/tmp/rerun_not_run.py');
  assert.equal(notRun.detected.batchSize?.value, 16);
  const evaluation = await estimateText(rerunScript('val_loader = DataLoader(data, batch_size=256)\nwith torch.no_grad():\n    print(sum(model(x.cuda()).sum() for x, _ in val_loader))'), '/tmp/rerun_eval.py');
  assert.equal(evaluation.detected.batchSize?.value, 16);
});
