// Hugging Face models built from configs in code: a two-tower CLIPConfig from text and vision sub-configs, a
// ViTMAEConfig (encoder over the kept patches, decoder over all), a dict Dataset sample giving an encoder-decoder's
// label length, and LoRA adapters on half weights under autocast.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findCatalogModel } from '../../server/src/estimator/catalog/models';
import { countTransformerParameters, layerActivation, tokensPerSample, type ActivationContext } from '../../server/src/estimator/transformer';

/** A training loop over a DataLoader of `dataset`, the model called with `call`. */
function trainingScript(imports: string, build: string[], dataset: string[], call: string, batchNames = 'batch'): string {
  return [
    'import torch',
    'from torch.utils.data import DataLoader, Dataset',
    imports,
    ...dataset,
    ...build,
    'optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)',
    'loader = DataLoader(Data(), batch_size=8)',
    `for ${batchNames} in loader:`,
    `    loss = ${call}`,
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
  ].join('\n');
}

const IMAGES = ['class Data(Dataset):', '    def __len__(self):', '        return 64', '    def __getitem__(self, i):', '        return torch.rand(3, 224, 224)'];

test('CLIPConfig built from text and vision sub-configs (dicts or config objects): each tower its own sizes', async () => {
  const published = findCatalogModel('openai/clip-vit-base-patch32')!;
  assert.equal(countTransformerParameters(published.spec).total, 151_277_313);
  const pairs = ['class Data(Dataset):', '    def __len__(self):', '        return 64', '    def __getitem__(self, i):',
    '        return torch.randn(3, 224, 224), torch.randint(0, 49408, (77,))'];
  const call = 'model(input_ids=texts.cuda(), pixel_values=images.cuda(), return_loss=True).loss';
  // ViT-B/32's own sizes, given as dicts: the published count.
  const asDicts = await estimateText(trainingScript('from transformers import CLIPConfig, CLIPModel', [
    'text_config = dict(vocab_size=49408, hidden_size=512, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=8, max_position_embeddings=77)',
    'vision_config = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12, image_size=224, patch_size=32)',
    'model = CLIPModel(CLIPConfig(text_config=text_config, vision_config=vision_config, projection_dim=512)).cuda()',
  ], pairs, call, '(images, texts)'), '/tmp/clip_dicts.py');
  assert.equal(asDicts.detected.model.source, 'from-config');
  assert.equal(asDicts.detected.parameters, 151_277_313);
  assert.ok(asDicts.peakAllocated && asDicts.peakAllocated > 0);
  // Smaller towers as config objects, patch 16, projection 256: every count follows the sub-configs.
  const small = await estimateText(trainingScript('from transformers import CLIPConfig, CLIPModel, CLIPTextConfig, CLIPVisionConfig', [
    'text = CLIPTextConfig(vocab_size=1000, hidden_size=256, intermediate_size=1024, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=77)',
    'vision = CLIPVisionConfig(hidden_size=384, intermediate_size=1536, num_hidden_layers=3, num_attention_heads=6, image_size=224, patch_size=16)',
    'model = CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=256)).cuda()',
  ], pairs, call, '(images, texts)'), '/tmp/clip_objects.py');
  const layer = (h: number, i: number): number => 4 * (h * h + h) + (h * i + i) + (i * h + h) + 4 * h;
  const textTower = 1000 * 256 + 77 * 256 + 2 * layer(256, 1024) + 2 * 256;
  const visionTower = 3 * 16 * 16 * 384 + 384 * (196 + 2) + 2 * 384 + 3 * layer(384, 1536) + 2 * 384;
  assert.equal(small.detected.parameters, textTower + visionTower + 256 * (256 + 384) + 1);
});

test('ViTMAEConfig: the published ViT-MAE base count; the encoder sees the kept patches, the decoder every patch', async () => {
  const published = findCatalogModel('facebook/vit-mae-base')!;
  assert.equal(countTransformerParameters(published.spec).total, 111_907_840);
  const script = (maskRatio: number): string => trainingScript('from transformers import ViTMAEConfig, ViTMAEForPreTraining', [
    'config = ViTMAEConfig(image_size=224, patch_size=16, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,',
    '                      intermediate_size=3072, decoder_hidden_size=512, decoder_num_hidden_layers=8,',
    `                      decoder_num_attention_heads=16, decoder_intermediate_size=2048, mask_ratio=${maskRatio})`,
    'model = ViTMAEForPreTraining(config).cuda()',
  ], IMAGES, 'model(pixel_values=batch.cuda()).loss');
  const base = await estimateText(script(0.75), '/tmp/vitmae.py');
  assert.equal(base.detected.model.source, 'from-config');
  assert.equal(base.detected.parameters, 111_907_840);
  const spec = base.config.model;
  assert.ok(spec.kind === 'transformer' && spec.decoder);
  if (spec.kind !== 'transformer' || !spec.decoder) return;
  // int(196 * 0.25) = 49 kept patches and the class token; the decoder's 196 patches and the class token.
  assert.equal(tokensPerSample(spec, 0, 224), 50);
  assert.deepEqual([spec.decoder.hidden, spec.decoder.layers, spec.decoder.heads, spec.decoder.intermediate], [512, 8, 16, 2048]);
  // Masking fewer patches lengthens only the encoder's sequence: the estimate grows with it.
  const half = await estimateText(script(0.5), '/tmp/vitmae_half.py');
  assert.equal(half.detected.parameters, 111_907_840);
  assert.ok(half.peakAllocated! > base.peakAllocated!);
  // A smaller decoder: fewer parameters, less memory.
  const smallDecoder = await estimateText(script(0.75).replace('decoder_num_hidden_layers=8', 'decoder_num_hidden_layers=2'), '/tmp/vitmae_small.py');
  const decoderLayer = 4 * (512 * 512 + 512) + 2 * 512 * 2048 + 2048 + 512 + 4 * 512;
  assert.equal(smallDecoder.detected.parameters, 111_907_840 - 6 * decoderLayer);
  assert.ok(smallDecoder.peakAllocated! < base.peakAllocated!);
});

test('a dict Dataset sample: an encoder-decoder\'s label length is the labels field\'s, whatever the model could take', async () => {
  const whisper = (labelLength: number): string => trainingScript('from transformers import WhisperConfig, WhisperForConditionalGeneration', [
    'config = WhisperConfig(vocab_size=51865, num_mel_bins=80, d_model=384, encoder_layers=2, decoder_layers=2, encoder_attention_heads=6,',
    '                       decoder_attention_heads=6, encoder_ffn_dim=1536, decoder_ffn_dim=1536, max_target_positions=448)',
    'model = WhisperForConditionalGeneration(config).cuda()',
  ], ['class Data(Dataset):', '    def __len__(self):', '        return 64', '    def __getitem__(self, i):',
    '        feats = torch.randn(80, 3000)',
    `        labels = torch.full((${labelLength},), -100, dtype=torch.long)`,
    '        labels[:10] = torch.randint(0, 50000, (10,))',
    '        return {"input_features": feats, "labels": labels}'],
  'model(input_features=batch["input_features"].cuda(), labels=batch["labels"].cuda()).loss');
  const short = await estimateText(whisper(96), '/tmp/whisper_96.py');
  assert.equal(short.detected.seqLen?.value, 96);
  assert.ok(!short.assumptions.some((a) => a.includes('seq_len')));
  const long = await estimateText(whisper(200), '/tmp/whisper_200.py');
  assert.equal(long.detected.seqLen?.value, 200);
  assert.ok(long.peakAllocated! > short.peakAllocated!);
});

test('LoRA on half weights under autocast: lora_A keeps autocast\'s half copy of peft\'s fp32 upcast, not the fp32 tensor', () => {
  const spec = { ...findCatalogModel('mistralai/Mistral-7B-v0.1')!.spec, hidden: 1024, intermediate: 3584, heads: 16, kvHeads: 4, headDim: 64, layers: 2 };
  const targets = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];
  const ctx = (autocast: boolean): ActivationContext => ({
    mode: 'half', training: true, attention: 'sdpa', batch: 1, seqLen: 128, imageSize: 224, frozenBase: true,
    loraTargets: new Set(targets), loraDropout: true, autocast,
  });
  // q, k, v, o, gate and up read 1024 features per token; down reads 3584: 2 bytes apart per feature.
  const adaptedFeatures = 6 * 1024 + 3584;
  const plain = layerActivation(spec, ctx(false)).perToken;
  const underAutocast = layerActivation(spec, ctx(true)).perToken;
  assert.equal(plain - underAutocast, 2 * adaptedFeatures);
});

test('LoraConfig(**cfg["lora"]): rank, targets and dropout from the dict the call spreads', async () => {
  const script = [
    'import torch',
    'from peft import LoraConfig, get_peft_model',
    'from transformers import AutoModelForCausalLM',
    'CFG = {"lora": {"r": 16, "lora_alpha": 32, "lora_dropout": 0.05, "target_modules": ["q_proj", "v_proj", "o_proj"]}}',
    'base = AutoModelForCausalLM.from_pretrained("facebook/opt-350m")',
    'model = get_peft_model(base, LoraConfig(task_type="CAUSAL_LM", **CFG["lora"])).cuda()',
    'opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)',
    'for step in range(3):',
    '    ids = torch.randint(0, 50000, (4, 512)).cuda()',
    '    loss = model(input_ids=ids, labels=ids).loss',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
  const r = await estimateText(script, '/tmp/lora_spread.py');
  assert.deepEqual(r.detected.lora, { rank: 16, targetModules: ['q_proj', 'v_proj', 'o_proj'], dropout: 0.05, line: 6 });
});
