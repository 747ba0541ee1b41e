import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import { findCatalogModel } from '../../server/src/estimator/catalog/models';
import { countTransformerParameters } from '../../server/src/estimator/transformer';
import type { LayerNetSpec } from '../../server/src/estimator/types';

function layers(name: string, size: number, classes: number, auxLoss = false): LayerNetSpec {
  const spec = findVisionModel(name)!.build(size, classes, { auxLoss });
  assert.equal(spec.kind, 'layers');
  return spec as LayerNetSpec;
}

test('Pythia (GPT-NeoX) configs imply the published parameter counts exactly', () => {
  const published: Array<[string, number]> = [
    ['EleutherAI/pythia-70m', 70_426_624], ['EleutherAI/pythia-160m', 162_322_944], ['EleutherAI/pythia-410m', 405_334_016],
    ['EleutherAI/pythia-1b', 1_011_781_632], ['EleutherAI/pythia-1.4b', 1_414_647_808],
  ];
  for (const [id, count] of published) assert.equal(countTransformerParameters(findCatalogModel(id)!.spec).total, count, id);
});

test('a GPT-NeoX checkpoint with LoRA on its fused attention and MLP linears: resolved, adapters counted, stored fp16 kept', async () => {
  const script = `
import torch
from transformers import AutoModelForCausalLM
from peft import LoraConfig, get_peft_model
net = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-160m")
net = get_peft_model(net, LoraConfig(r=8, target_modules=["query_key_value", "dense_4h_to_h"], lora_dropout=0.0))
net.cuda()
opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4)
for step in range(3):
    ids = torch.randint(0, 50000, (4, 256), device="cuda")
    out = net(input_ids=ids, labels=ids)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
`;
  const result = await estimateText(script, 'neox_lora.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.model?.name, 'EleutherAI/pythia-160m');
  // r x (in + out) per adapted linear: query_key_value 768 -> 2304, dense_4h_to_h 3072 -> 768, 12 layers.
  assert.equal(result.detected.trainableParameters, 12 * 8 * ((768 + 2304) + (3072 + 768)));
  assert.equal(result.detected.weightDtype?.value, 'fp16');
});

test('torchvision segmentation builders: published counts (21 classes with the aux head), num_classes and aux_loss change them', () => {
  const published: Array<[string, number]> = [
    ['fcn_resnet50', 35_322_218], ['fcn_resnet101', 54_314_346], ['deeplabv3_resnet50', 42_004_074],
    ['deeplabv3_resnet101', 60_996_202], ['deeplabv3_mobilenet_v3_large', 11_029_328], ['lraspp_mobilenet_v3_large', 3_221_538],
  ];
  for (const [name, count] of published) assert.equal(layers(name, 520, 21, true).parameters, count, name);
  // Without aux_loss the FCN head on the third stage is not built: 1024 -> 256 3x3 conv, BatchNorm, 256 -> 21 classifier.
  assert.equal(layers('deeplabv3_resnet50', 520, 21).parameters, 42_004_074 - (1024 * 256 * 9 + 2 * 256 + 256 * 21 + 21));
  // Two fewer classes: two fewer rows of 256 weights and a bias in each classifier.
  assert.equal(layers('fcn_resnet50', 520, 19, true).parameters, 35_322_218 - 2 * (512 + 1) - 2 * (256 + 1));
});

test('a dilated backbone keeps its late stages at 1/8 of the input, and each head\'s map is resized to the input', () => {
  const size = 256;
  const classes = 7;
  const plain = findVisionModel('resnet50')!.build(size, 1000) as LayerNetSpec;
  const seg = layers('fcn_resnet50', size, classes);
  const withAux = layers('fcn_resnet50', size, classes, true);
  // Stage 4 alone (3 bottlenecks of 2048 channels) at 1/8 instead of 1/32 keeps more than the whole plain network.
  assert.ok(seg.savedElementsPerSample > 2 * plain.savedElementsPerSample, `${seg.savedElementsPerSample} vs ${plain.savedElementsPerSample}`);
  assert.equal(seg.outputElementsPerSample, classes * size * size);
  assert.equal(withAux.outputElementsPerSample, 2 * classes * size * size);
  // Activations scale with the pixels.
  const twice = layers('fcn_resnet50', 2 * size, classes);
  assert.ok(Math.abs(twice.savedElementsPerSample / seg.savedElementsPerSample - 4) < 0.05);
});

test('a segmentation model from torchvision.models.segmentation with num_classes and aux_loss in a script', async () => {
  const script = `
import torch
import torch.nn.functional as F
from torchvision.models import segmentation
CLASSES = 6
net = segmentation.deeplabv3_mobilenet_v3_large(weights=None, num_classes=CLASSES, aux_loss=True).cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for it in range(4):
    x = torch.randn(4, 3, 384, 384, device="cuda")
    y = torch.randint(0, CLASSES, (4, 384, 384), device="cuda")
    res = net(x)
    loss = F.cross_entropy(res["out"], y) + 0.4 * F.cross_entropy(res["aux"], y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const result = await estimateText(script, 'seg_fixture.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.model?.name, 'deeplabv3_mobilenet_v3_large');
  assert.equal(result.detected.parameters, layers('deeplabv3_mobilenet_v3_large', 384, 6, true).parameters);
  assert.equal(result.detected.imageSize?.value, 384);
});
