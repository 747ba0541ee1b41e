#!/usr/bin/env python3
"""Validation measurements for the memory estimator: one entry per script in
test/fixtures/estimator/validation/, building the SAME model with random init from the catalog's config values
(no downloads) and running the script's step the way the script does.

Method (mirrors test/gpu/truth-measure.py): libraries are initialised first (cuBLAS/cuDNN workspaces,
so they are part of every peak, as there); the model is built, cast, wrapped (LoRA, checkpointing), the optimizer
made and the batch put on the GPU; then the peak counters are reset and 3 optimizer steps (or 3 inference batches)
run; peak_alloc = torch.cuda.max_memory_allocated() over those steps.
Models whose script loads them with transformers 5's from_pretrained and no dtype hold the checkpoint's dtype
(bf16 for Qwen2.5 and Llama-3.2): built here in bf16 the same way.

Run on a CUDA machine:  PYTHONUNBUFFERED=1 python3 validate.py --out OUTDIR   (writes OUTDIR/validate.json)
"""
import argparse
import gc
import json
import time
import traceback
from contextlib import nullcontext

import torch
import torch.nn as nn
import torch.nn.functional as F

T0 = time.time()


def log(*a):
    print(f'[{time.time() - T0:6.1f}s]', *a, flush=True)


# ------------------------------------------------------------------------------------------------------------------
# models, from the catalog's config values (server/src/estimator/catalog/*.ts)
# ------------------------------------------------------------------------------------------------------------------
QWEN25_05B = dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                  vocab_size=151936, max_position_embeddings=32768, tie_word_embeddings=True)
LLAMA32_1B = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                  head_dim=64, vocab_size=128256, max_position_embeddings=131072, tie_word_embeddings=True, rope_theta=500000.0)


def hf_model(kind, dtype, num_labels=None, use_cache=None):
    import transformers as tr
    if kind == 'qwen25_05b':
        cfg, cls = tr.Qwen2Config(**QWEN25_05B), tr.Qwen2ForCausalLM
    elif kind == 'llama32_1b':
        cfg, cls = tr.LlamaConfig(**LLAMA32_1B), tr.LlamaForCausalLM
    elif kind == 'roberta_base':
        cfg = tr.RobertaConfig(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1, num_labels=num_labels)
        cls = tr.RobertaForSequenceClassification
    elif kind == 'deberta_v3_base':
        cfg = tr.DebertaV2Config(vocab_size=128100, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                                 max_position_embeddings=512, relative_attention=True, max_relative_positions=-1, position_buckets=256,
                                 norm_rel_ebd='layer_norm', share_att_key=True, pos_att_type=['p2c', 'c2p'], position_biased_input=False,
                                 type_vocab_size=0, layer_norm_eps=1e-7, pooler_hidden_size=768, pooler_dropout=0, pooler_hidden_act='gelu',
                                 num_labels=num_labels)
        cls = tr.DebertaV2ForSequenceClassification
    elif kind == 'distilgpt2':
        cfg, cls = tr.GPT2Config(n_layer=6), tr.GPT2LMHeadModel
    elif kind == 'gpt2_large':
        cfg, cls = tr.GPT2Config(n_embd=1280, n_layer=36, n_head=20), tr.GPT2LMHeadModel
    elif kind == 't5_small':
        cfg = tr.T5Config(d_model=512, d_ff=2048, num_layers=6, num_heads=8, d_kv=64, vocab_size=32128, feed_forward_proj='relu',
                          decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
        cls = tr.T5ForConditionalGeneration
    else:
        raise ValueError(kind)
    if use_cache is not None:
        cfg.use_cache = use_cache
    # DeBERTa-v2/v3 has its own disentangled attention (no SDPA path in transformers 5).
    attn = 'eager' if kind == 'deberta_v3_base' else 'sdpa'
    errors = []
    for where in ('cuda', 'cpu'):
        try:
            with torch.device(where):
                model = cls._from_config(cfg, attn_implementation=attn, dtype=dtype)
            return model.to(dtype).to('cuda')
        except Exception as e:  # noqa: BLE001 - fall back to building on the CPU
            errors.append(f'{where}: {type(e).__name__}: {str(e)[:200]}')
            gc.collect()
            torch.cuda.empty_cache()
    raise RuntimeError(' | '.join(errors))


class ConvNet(nn.Module):
    def __init__(self, num_classes=100):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(inplace=True),
            nn.Conv2d(128, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(128, 256, 3, padding=1), nn.BatchNorm2d(256), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(256, num_classes))

    def forward(self, x):
        return self.classifier(self.pool(self.features(x)))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(32000, 512)
        layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=8)
        self.head = nn.Linear(512, 32000)

    def forward(self, x):
        return self.head(self.encoder(self.tok(x)))


class BiLSTMClassifier(nn.Module):
    def __init__(self, vocab_size=20000, embed_dim=300, hidden=256, num_classes=5):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden, num_layers=2, bidirectional=True, batch_first=True, dropout=0.3)
        self.fc = nn.Linear(2 * hidden, num_classes)

    def forward(self, x):
        out, _ = self.lstm(self.embedding(x))
        return self.fc(out[:, -1, :])


class LoraLinear(nn.Module):
    """Fallback when peft is missing: what peft's LoRA Linear does (fp32 adapters over a frozen base, input cast to
    the adapter dtype, dropout, scale alpha/r)."""

    def __init__(self, base, r, alpha, dropout):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False, device=base.weight.device, dtype=torch.float32)
        self.lora_B = nn.Linear(r, base.out_features, bias=False, device=base.weight.device, dtype=torch.float32)
        nn.init.zeros_(self.lora_B.weight)
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.scale = alpha / r

    def forward(self, x):
        out = self.base(x)
        lora = self.lora_B(self.lora_A(self.drop(x.to(self.lora_A.weight.dtype)))) * self.scale
        return out + lora.to(out.dtype)


def apply_lora(model, r, alpha, dropout, targets):
    try:
        from peft import LoraConfig, get_peft_model
        return get_peft_model(model, LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=targets,
                                                task_type='CAUSAL_LM')), 'peft'
    except ImportError:
        for p in model.parameters():
            p.requires_grad_(False)
        for mod in list(model.modules()):
            for name, child in list(mod.named_children()):
                if name in targets and isinstance(child, nn.Linear):
                    setattr(mod, name, LoraLinear(child, r, alpha, dropout))
        return model, 'own LoraLinear (peft missing)'


def tv_model(name, num_classes):
    import torchvision
    with torch.device('cuda'):
        return getattr(torchvision.models, name)(weights=None, num_classes=num_classes)


# ------------------------------------------------------------------------------------------------------------------
# the cases, one per validation script (ids = script names)
# ------------------------------------------------------------------------------------------------------------------
BF16, FP32 = 'bf16', 'fp32'
CASES = [
    dict(id='qwen25_05b_bf16_adamw', hf='qwen25_05b', w=BF16, b=8, s=1024, task='clm', opt='adamw'),
    dict(id='qwen25_05b_bf16_adamw_ckpt', hf='qwen25_05b', w=BF16, b=16, s=1024, task='clm', opt='adamw', ckpt=True, use_cache=False),
    dict(id='llama32_1b_bf16_adamw', hf='llama32_1b', w=BF16, b=4, s=1024, task='clm', opt='adamw'),
    dict(id='llama32_1b_bf16_adamw_ckpt', hf='llama32_1b', w=BF16, b=8, s=2048, task='clm', opt='adamw', ckpt=True),
    dict(id='llama32_1b_lora_r8_all', hf='llama32_1b', w=BF16, b=4, s=1024, task='clm', opt='adamw',
         lora=dict(r=8, alpha=16, dropout=0.05, targets=['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'])),
    dict(id='roberta_base_trainer_fp16', hf='roberta_base', labels=3, w=FP32, b=32, s=256, task='cls', opt='trainer', amp='fp16'),
    dict(id='deberta_v3_base_trainer_fp16', hf='deberta_v3_base', labels=2, w=FP32, b=8, s=512, task='cls', opt='trainer', amp='fp16', ga=2),
    dict(id='distilgpt2_fp32_adamw', hf='distilgpt2', w=FP32, b=32, s=256, task='clm', opt='adamw'),
    dict(id='gpt2_large_ampbf16_adamw', hf='gpt2_large', w=FP32, b=4, s=768, task='clm', opt='adamw', amp='bf16'),
    dict(id='t5_small_seq2seq_fp32', hf='t5_small', w=FP32, b=32, s=512, task='s2s', opt='adamw'),
    dict(id='vit_l16_tv_ampbf16_adamw', tv='vit_l_16', classes=100, b=32, i=224, opt='adamw', amp='bf16'),
    dict(id='resnet101_fp32_sgdm_i288', tv='resnet101', classes=1000, b=32, i=288, opt='sgd_momentum'),
    dict(id='resnet18_ampfp16_adamw_i160', tv='resnet18', classes=10, b=256, i=160, opt='adamw', amp='fp16'),
    dict(id='efficientnet_b0_tv_ampbf16_i256', tv='efficientnet_b0', classes=200, b=64, i=256, opt='sgd_nesterov', amp='bf16',
         label_smoothing=0.1),
    dict(id='convnext_tiny_tv_ampbf16_fused', tv='convnext_tiny', classes=1000, b=64, i=224, opt='adamw_fused', amp='bf16'),
    dict(id='custom_vgg_cnn_adamw', custom='convnet', classes=100, b=128, i=64, opt='adamw'),
    dict(id='custom_transformer_lm_ampbf16', custom='tinylm', b=16, s=512, opt='adamw', amp='bf16'),
    dict(id='custom_bilstm_classifier', custom='bilstm', classes=5, b=64, s=256, opt='adam'),
    dict(id='roberta_base_eval_no_nograd', hf='roberta_base', labels=2, w=FP32, b=64, s=256, task='cls', infer='grad'),
    dict(id='llama32_1b_eval_nograd', hf='llama32_1b', w=BF16, b=8, s=1024, task='clm', infer='no_grad'),
]


def make_opt(name, params):
    params = [p for p in params if p.requires_grad]
    if name == 'adamw':
        return torch.optim.AdamW(params, lr=1e-5)
    if name == 'adamw_fused':
        return torch.optim.AdamW(params, lr=1e-5, fused=True)
    if name == 'trainer':
        # transformers' Trainer default optim "adamw_torch_fused", decay / no-decay groups.
        decay = [p for p in params if p.ndim >= 2]
        rest = [p for p in params if p.ndim < 2]
        return torch.optim.AdamW([dict(params=decay, weight_decay=0.0), dict(params=rest, weight_decay=0.0)], lr=2e-5, fused=True)
    if name == 'adam':
        return torch.optim.Adam(params, lr=1e-3)
    if name == 'sgd_momentum':
        return torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-4)
    if name == 'sgd_nesterov':
        return torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True)
    raise ValueError(name)


def build(c):
    torch.manual_seed(0)
    info = {}
    if 'hf' in c:
        dtype = torch.bfloat16 if c['w'] == BF16 else torch.float32
        model = hf_model(c['hf'], dtype, c.get('labels'), c.get('use_cache'))
        info['vocab'] = model.config.vocab_size
    elif 'tv' in c:
        model = tv_model(c['tv'], c['classes'])
    else:
        with torch.device('cuda'):
            model = {'convnet': lambda: ConvNet(c['classes']), 'tinylm': TinyLM, 'bilstm': BiLSTMClassifier}[c['custom']]()
    if c.get('lora'):
        lo = c['lora']
        model, info['lora_impl'] = apply_lora(model, lo['r'], lo['alpha'], lo['dropout'], lo['targets'])
    if c.get('ckpt'):
        model.gradient_checkpointing_enable()
    return model, info


def make_batch(c, info):
    g = torch.Generator(device='cuda')
    g.manual_seed(1234)
    b = c['b']
    if 'hf' in c:
        ids = torch.randint(0, info['vocab'], (b, c['s']), device='cuda', generator=g)
        mask = torch.ones_like(ids)
        if c['task'] == 'clm':
            return dict(input_ids=ids, attention_mask=mask, labels=ids)
        if c['task'] == 's2s':
            return dict(input_ids=ids, attention_mask=mask, labels=torch.randint(0, info['vocab'], (b, c['s']), device='cuda', generator=g))
        return dict(input_ids=ids, attention_mask=mask, labels=torch.randint(0, c['labels'], (b,), device='cuda', generator=g))
    if 'tv' in c or c.get('custom') == 'convnet':
        x = torch.randn(b, 3, c['i'], c['i'], device='cuda', generator=g)
        return dict(x=x, y=torch.randint(0, c['classes'], (b,), device='cuda', generator=g))
    if c['custom'] == 'tinylm':
        x = torch.randint(0, 32000, (b, c['s']), device='cuda', generator=g)
        return dict(x=x, y=x)
    x = torch.randint(0, 20000, (b, c['s']), device='cuda', generator=g)
    return dict(x=x, y=torch.randint(0, c['classes'], (b,), device='cuda', generator=g))


def forward_loss(c, model, batch):
    if 'hf' in c:
        out = model(**batch)
        return out, out.loss
    out = model(batch['x'])
    if c.get('custom') == 'tinylm':
        return out, F.cross_entropy(out.reshape(-1, out.shape[-1]), batch['y'].reshape(-1))
    return out, F.cross_entropy(out, batch['y'], label_smoothing=c.get('label_smoothing', 0.0))


def autocast(amp):
    if amp == 'bf16':
        return torch.autocast('cuda', dtype=torch.bfloat16)
    if amp == 'fp16':
        return torch.autocast('cuda', dtype=torch.float16)
    return nullcontext()


def run(c):
    rec = dict(c)
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    rec['alloc_at_start'] = torch.cuda.memory_allocated()
    model, info = build(c)
    rec.update({k: v for k, v in info.items() if k != 'vocab'})
    rec['param_count'] = sum(p.numel() for p in model.parameters())
    rec['trainable_param_count'] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    rec['param_dtypes'] = sorted({str(p.dtype) for p in model.parameters()})
    batch = make_batch(c, info)
    skipped = []
    if c.get('infer'):
        model.eval()
        torch.cuda.synchronize()
        rec['alloc_before_loop'] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        total = 0.0
        for _ in range(3):
            ctx = torch.no_grad() if c['infer'] == 'no_grad' else nullcontext()
            with ctx, autocast(c.get('amp')):
                out, loss = forward_loss(c, model, batch)  # `out` of the previous batch lives until rebound, as in the script
            total += loss.item()
        torch.cuda.synchronize()
        rec['peak_alloc'] = torch.cuda.max_memory_allocated()
        rec['peak_reserved'] = torch.cuda.max_memory_reserved()
        del out, loss
    else:
        model.train()
        opt = make_opt(c['opt'], model.parameters())
        # GradScaler at 256 (gpu-truth's _is256 rows): at random init the default 65536 skips steps and no state is made.
        scaler = torch.amp.GradScaler('cuda', init_scale=256.0) if c.get('amp') == 'fp16' else None
        trainer = c['opt'] == 'trainer'
        ga = c.get('ga', 1)
        torch.cuda.synchronize()
        rec['alloc_before_loop'] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        for _ in range(3):
            for _ in range(ga):
                with autocast(c.get('amp')):
                    out, loss = forward_loss(c, model, batch)
                    if ga > 1:
                        loss = loss / ga
                if trainer:
                    del out  # Trainer.compute_loss returns the loss only
                    out = None
                (scaler.scale(loss) if scaler else loss).backward()
                del out, loss
            if scaler:
                if trainer:
                    scaler.unscale_(opt)
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                s0 = scaler.get_scale()
                scaler.step(opt)
                scaler.update()
                skipped.append(scaler.get_scale() < s0)
            else:
                if trainer:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
            opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        rec['peak_alloc'] = torch.cuda.max_memory_allocated()
        rec['peak_reserved'] = torch.cuda.max_memory_reserved()
        rec['opt_state_bytes'] = sum(v.numel() * v.element_size() for st in opt.state.values() for v in st.values()
                                     if torch.is_tensor(v) and v.is_cuda)
        rec['scaler_skipped_steps'] = skipped
        del opt
    del model, batch
    return rec


def init_libraries():
    """The same warm-up as gpu-truth's measure_context: cuBLAS/cuBLASLt and cuDNN workspaces exist before any run."""
    a = torch.randn(256, 256, device='cuda')
    (a @ a).sum().item()
    (a.half() @ a.half()).float().sum().item()
    (a.bfloat16() @ a.bfloat16()).float().sum().item()
    F.linear(a, a, a[0]).sum().item()
    x = torch.randn(2, 3, 32, 32, device='cuda')
    w = torch.randn(8, 3, 3, 3, device='cuda')
    F.conv2d(x, w).sum().item()
    F.conv2d(x.half(), w.half()).float().sum().item()
    xg = x.clone().requires_grad_(True)
    F.conv2d(xg, w).sum().backward()
    torch.cuda.synchronize()
    del a, x, w, xg
    gc.collect()
    torch.cuda.empty_cache()
    return torch.cuda.memory_allocated()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default='.')
    ap.add_argument('--budget', type=float, default=420.0)
    ap.add_argument('--only', default=None)
    args = ap.parse_args()
    import torchvision
    import transformers
    transformers.logging.set_verbosity_error()
    torch.backends.cudnn.benchmark = False
    meta = dict(torch=torch.__version__, transformers=transformers.__version__, torchvision=torchvision.__version__,
                gpu=torch.cuda.get_device_name(0))
    try:
        import peft
        meta['peft'] = peft.__version__
    except ImportError:
        meta['peft'] = None
    meta['baseline_alloc_after_lib_init'] = init_libraries()
    runs = []
    cases = [c for c in CASES if not args.only or any(k in c['id'] for k in args.only.split(','))]
    for c in cases:
        if time.time() - T0 > args.budget:
            runs.append(dict(c, error='skipped: time budget'))
            continue
        t = time.time()
        try:
            rec = run(c)
            rec['error'] = None
        except Exception as e:  # noqa: BLE001 - every failure is recorded, none is fatal
            rec = dict(c, error=f'{type(e).__name__}: {str(e)[:300]}', traceback=traceback.format_exc()[-2000:])
        rec['time_s'] = round(time.time() - t, 1)
        gc.collect()
        torch.cuda.empty_cache()
        runs.append(rec)
        log(c['id'], 'peak MiB %.1f' % (rec.get('peak_alloc', 0) / 2**20), 'P', rec.get('param_count'),
            'T', rec.get('trainable_param_count'), rec.get('lora_impl', ''), rec['error'] or '')
        with open(f'{args.out}/validate.json', 'w') as f:
            json.dump(dict(meta=meta, runs=runs), f, indent=1)
    log('done')


if __name__ == '__main__':
    main()
