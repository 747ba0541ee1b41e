#!/usr/bin/env python3
"""Peak GPU memory of configurations that gpu-truth does not cover (other HF families, LoRA, custom modules,
more torchvision models, Trainer-like fused AdamW), measured like test/gpu/truth-measure.py:
random init from known config values (no downloads), 3 optimizer steps, peak = torch.cuda.max_memory_allocated.

Run on a CUDA machine:  python3 measure_more.py --out OUTDIR   (writes OUTDIR/more.json)
"""
import argparse
import json
import math
import time
import traceback
from contextlib import nullcontext

import torch
import torch.nn as nn
import torch.nn.functional as F

T0 = time.time()


def log(*a):
    print(f'[{time.time() - T0:6.1f}s]', *a, flush=True)


class LoraLinear(nn.Module):
    """Like PEFT's LoRA Linear: frozen base, fp32 A/B, input cast to the adapter dtype, scale alpha/r."""

    def __init__(self, base, r=16, alpha=32):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False, device=base.weight.device, dtype=torch.float32)
        self.lora_B = nn.Linear(r, base.out_features, bias=False, device=base.weight.device, dtype=torch.float32)
        nn.init.zeros_(self.lora_B.weight)
        self.scale = alpha / r

    def forward(self, x):
        out = self.base(x)
        lora = self.lora_B(self.lora_A(x.to(self.lora_A.weight.dtype))) * self.scale
        return out + lora.to(out.dtype)


def add_lora(model, targets, r):
    for p in model.parameters():
        p.requires_grad_(False)
    for name, mod in list(model.named_modules()):
        for child_name, child in list(mod.named_children()):
            if child_name in targets and isinstance(child, nn.Linear):
                setattr(mod, child_name, LoraLinear(child, r))
    return model


def hf_model(kind):
    import transformers as tr
    if kind == 'qwen05':
        cfg = tr.Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                             num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768,
                             tie_word_embeddings=True, use_cache=False)
        return tr.Qwen2ForCausalLM._from_config(cfg, attn_implementation='sdpa'), 'clm', 151936
    if kind == 'opt125':
        cfg = tr.OPTConfig(use_cache=False)
        return tr.OPTForCausalLM._from_config(cfg, attn_implementation='sdpa'), 'clm', cfg.vocab_size
    if kind == 't5small':
        cfg = tr.T5Config(use_cache=False)
        return tr.T5ForConditionalGeneration(cfg), 's2s', cfg.vocab_size
    if kind == 'tinyllama':
        cfg = tr.LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32,
                             num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048,
                             tie_word_embeddings=False, use_cache=False)
        return tr.LlamaForCausalLM._from_config(cfg, attn_implementation='sdpa'), 'clm', 32000
    if kind == 'bert':
        cfg = tr.BertConfig(num_labels=2)
        return tr.BertForSequenceClassification._from_config(cfg, attn_implementation='sdpa'), 'cls', cfg.vocab_size
    raise ValueError(kind)


def custom_model(kind):
    if kind == 'mlp':
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Dropout(0.2), nn.Linear(1024, 1024), nn.ReLU(),
                             nn.Linear(1024, 10)), 'img', (1, 28)
    if kind == 'cnn':
        return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(64 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10)), 'img', (3, 32)
    if kind == 'lstm':
        class LSTMLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10000, 256)
                self.lstm = nn.LSTM(256, 512, num_layers=2, batch_first=True)
                self.head = nn.Linear(512, 10000)

            def forward(self, x):
                h, _ = self.lstm(self.emb(x))
                return self.head(h)
        return LSTMLM(), 'tok', 10000
    if kind == 'encoder':
        class Enc(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(30000, 512)
                layer = nn.TransformerEncoderLayer(512, 8, 2048, 0.1, batch_first=True)
                self.enc = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)
                self.head = nn.Linear(512, 2)

            def forward(self, x):
                return self.head(self.enc(self.emb(x)).mean(1))
        return Enc(), 'tokcls', 30000
    raise ValueError(kind)


def tv_model(name):
    import torchvision
    return getattr(torchvision.models, name)(weights=None, num_classes=1000)


CONFIGS = [
    # id, source, model kind, batch, seq or image, precision, optimizer, extras
    dict(id='qwen05_b4_s512_ampbf16_adamw', src='hf', m='qwen05', b=4, s=512, p='amp_bf16', o='adamw'),
    dict(id='qwen05_b8_s512_bf16_adamw', src='hf', m='qwen05', b=8, s=512, p='bf16', o='adamw'),
    dict(id='opt125_b8_s512_fp32_adamw', src='hf', m='opt125', b=8, s=512, p='fp32', o='adamw'),
    dict(id='opt125_b8_s512_ampfp16_adamw', src='hf', m='opt125', b=8, s=512, p='amp_fp16', o='adamw'),
    dict(id='t5small_b16_s256_fp32_adamw', src='hf', m='t5small', b=16, s=256, p='fp32', o='adamw'),
    dict(id='tinyllama_lora_b4_s512_bf16_adamw', src='hf', m='tinyllama', b=4, s=512, p='bf16', o='adamw',
         lora=['q_proj', 'v_proj']),
    dict(id='tinyllama_lora_b8_s1024_bf16_adamw_ckpt', src='hf', m='tinyllama', b=8, s=1024, p='bf16', o='adamw',
         lora=['q_proj', 'k_proj', 'v_proj', 'o_proj'], ckpt=True),
    dict(id='bert_trainer_b32_s128_ampbf16_adamwfused_ga2', src='hf', m='bert', b=32, s=128, p='amp_bf16',
         o='adamw_fused', ga=2),
    dict(id='mlp_b256_fp32_adam', src='custom', m='mlp', b=256, p='fp32', o='adam'),
    dict(id='cnn_b128_i32_fp32_sgdm', src='custom', m='cnn', b=128, p='fp32', o='sgd_momentum'),
    dict(id='lstm_b32_s128_fp32_adam', src='custom', m='lstm', b=32, s=128, p='fp32', o='adam'),
    dict(id='encoder_b32_s256_fp32_adamw', src='custom', m='encoder', b=32, s=256, p='fp32', o='adamw'),
    dict(id='resnet18_b64_i224_fp32_sgdm', src='tv', m='resnet18', b=64, s=224, p='fp32', o='sgd_momentum'),
    dict(id='resnet18_b64_i224_ampbf16_sgdm', src='tv', m='resnet18', b=64, s=224, p='amp_bf16', o='sgd_momentum'),
    dict(id='mobilenet_v2_b64_i224_fp32_adamw', src='tv', m='mobilenet_v2', b=64, s=224, p='fp32', o='adamw'),
    dict(id='efficientnet_b0_b32_i224_fp32_adamw', src='tv', m='efficientnet_b0', b=32, s=224, p='fp32', o='adamw'),
    dict(id='convnext_tiny_b32_i224_fp32_adamw', src='tv', m='convnext_tiny', b=32, s=224, p='fp32', o='adamw'),
    dict(id='vit_b_16_tv_b32_i224_ampbf16_adamw', src='tv', m='vit_b_16', b=32, s=224, p='amp_bf16', o='adamw'),
    dict(id='resnet18_infer_b64_i224_fp32_grad', src='tv', m='resnet18', b=64, s=224, p='fp32', o=None, infer='grad'),
    dict(id='resnet18_infer_b64_i224_fp32_nograd', src='tv', m='resnet18', b=64, s=224, p='fp32', o=None, infer='no_grad'),
]


def make_opt(name, params):
    params = [p for p in params if p.requires_grad]
    if name == 'sgd_momentum':
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    if name == 'adam':
        return torch.optim.Adam(params, lr=1e-4)
    if name == 'adamw':
        return torch.optim.AdamW(params, lr=1e-4)
    if name == 'adamw_fused':
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    raise ValueError(name)


def build(c):
    torch.manual_seed(0)
    task, extra = None, None
    if c['src'] == 'hf':
        model, task, extra = hf_model(c['m'])
    elif c['src'] == 'custom':
        model, task, extra = custom_model(c['m'])
    else:
        model, task = tv_model(c['m']), 'tv'
    if c['p'] == 'bf16':
        model = model.to(torch.bfloat16)
    model = model.to('cuda')
    if c.get('lora'):
        add_lora(model, set(c['lora']), 16)
    if c.get('ckpt'):
        model.gradient_checkpointing_enable()
        if c.get('lora'):
            model.enable_input_require_grads()
    return model, task, extra


def batch_for(c, task, extra):
    b = c['b']
    g = torch.Generator(device='cuda')
    g.manual_seed(1)
    if task in ('clm', 's2s', 'cls'):
        ids = torch.randint(0, 1000, (b, c['s']), device='cuda', generator=g)
        if task == 'cls':
            return dict(input_ids=ids, labels=torch.randint(0, 2, (b,), device='cuda', generator=g))
        return dict(input_ids=ids, labels=ids)
    if task == 'tv':
        x = torch.randn(b, 3, c['s'], c['s'], device='cuda', generator=g)
        return dict(x=x.to(torch.bfloat16) if c['p'] == 'bf16' else x, y=torch.randint(0, 1000, (b,), device='cuda', generator=g))
    if task == 'img':
        ch, size = extra
        return dict(x=torch.randn(b, ch, size, size, device='cuda', generator=g), y=torch.randint(0, 10, (b,), device='cuda', generator=g))
    if task == 'tok':
        ids = torch.randint(0, extra, (b, c['s']), device='cuda', generator=g)
        return dict(x=ids, y=ids)
    if task == 'tokcls':
        return dict(x=torch.randint(0, extra, (b, c['s']), device='cuda', generator=g), y=torch.randint(0, 2, (b,), device='cuda', generator=g))
    raise ValueError(task)


def loss_of(model, task, batch):
    if task in ('clm', 's2s', 'cls'):
        out = model(**batch)
        return out, out.loss
    out = model(batch['x'])
    if task == 'tok':
        return out, F.cross_entropy(out.reshape(-1, out.shape[-1]), batch['y'].reshape(-1))
    return out, F.cross_entropy(out, batch['y'])


def autocast(p):
    if p == 'amp_bf16':
        return torch.autocast('cuda', dtype=torch.bfloat16)
    if p == 'amp_fp16':
        return torch.autocast('cuda', dtype=torch.float16)
    return nullcontext()


def run(c):
    rec = dict(c)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    rec['alloc_at_start'] = torch.cuda.memory_allocated()
    model, task, extra = build(c)
    rec['param_count'] = sum(p.numel() for p in model.parameters())
    rec['trainable_param_count'] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    batch = batch_for(c, task, extra)
    if c.get('infer'):
        model.eval()
        out = None
        for _ in range(3):
            ctx = torch.no_grad() if c['infer'] == 'no_grad' else nullcontext()
            with ctx, autocast(c['p']):
                out, loss = loss_of(model, task, batch)
            _ = loss.item()
        del out, loss
    else:
        model.train()
        opt = make_opt(c['o'], model.parameters())
        scaler = torch.amp.GradScaler('cuda', init_scale=256.0) if c['p'] == 'amp_fp16' else None
        ga = c.get('ga', 1)
        for _ in range(3):
            for _ in range(ga):
                with autocast(c['p']):
                    out, loss = loss_of(model, task, batch)
                    loss = loss / ga
                (scaler.scale(loss) if scaler else loss).backward()
                del out, loss
            if scaler:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
            opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    rec['peak_alloc'] = torch.cuda.max_memory_allocated()
    rec['peak_reserved'] = torch.cuda.max_memory_reserved()
    del model, batch
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default='.')
    ap.add_argument('--budget', type=float, default=360.0)
    args = ap.parse_args()
    import transformers
    transformers.logging.set_verbosity_error()
    meta = dict(torch=torch.__version__, transformers=transformers.__version__, gpu=torch.cuda.get_device_name(0))
    runs = []
    for c in CONFIGS:
        if time.time() - T0 > args.budget:
            runs.append(dict(c, error='skipped: time budget'))
            continue
        try:
            rec = run(c)
            rec['error'] = None
        except Exception as e:  # noqa: BLE001 - every failure is recorded, none is fatal
            rec = dict(c, error=f'{type(e).__name__}: {str(e)[:300]}', traceback=traceback.format_exc()[-1500:])
        import gc
        gc.collect()
        torch.cuda.empty_cache()
        runs.append(rec)
        log(c['id'], 'peak MiB', '%.1f' % (rec.get('peak_alloc', 0) / 2**20), 'P', rec.get('param_count'), rec.get('error'))
        with open(f'{args.out}/more.json', 'w') as f:
            json.dump(dict(meta=meta, runs=runs), f, indent=1)


if __name__ == '__main__':
    main()
