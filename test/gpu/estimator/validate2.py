#!/usr/bin/env python3
"""Second round of validation measurements for the memory estimator: families and settings of the catalog that
validate.py did not measure (Gemma / Gemma 2 with a 256k vocabulary, Phi-2 / Phi-3-mini, OPT loaded in its stored
fp16, a Mistral config with a sliding window, Qwen2-1.5B + LoRA + checkpointing, BERT-large under Trainer with bf16
and accumulation 4, Flan-T5 with shorter targets, Whisper, CLIP contrastive, an evaluation loop that keeps its
logits with their graphs, ResNet-50 channels_last, an MLP at a huge batch). One entry per script in
test/fixtures/estimator/validation/ (ids = script names).

Method: validate.py's (which mirrors test/gpu/truth-measure.py): libraries initialised first; the model built
from the checkpoint's config values with random init (no downloads), in the dtype the script loads it in
(transformers 5 loads the checkpoint's stored dtype when from_pretrained is given none), with the attention the
script would get (no attn_implementation unless the script names one); model, optimizer and batch on the GPU; peak
counters reset; 3 optimizer steps (inference: 3 batches, the previous output alive until rebound; the leak loop:
`batches` batches whose logits are all kept); peak_alloc = torch.cuda.max_memory_allocated().

Run on a CUDA machine:  PYTHONUNBUFFERED=1 python3 validate2.py --out OUTDIR   (writes OUTDIR/validate2.json)
"""
import argparse
import gc
import json
import os
import sys
import time
import traceback
from contextlib import nullcontext

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate as v  # noqa: E402 - the first round's helpers (optimizers, autocast, library warm-up, LoRA, torchvision)

T0 = time.time()


def log(*a):
    print(f'[{time.time() - T0:6.1f}s]', *a, flush=True)


# ------------------------------------------------------------------------------------------------------------------
# configs: the checkpoints' config.json values
# ------------------------------------------------------------------------------------------------------------------
def hf_config(kind):
    import transformers as tr
    if kind == 'gemma_2b':
        return tr.GemmaConfig(vocab_size=256000, hidden_size=2048, intermediate_size=16384, num_hidden_layers=18, num_attention_heads=8,
                              num_key_value_heads=1, head_dim=256, max_position_embeddings=8192, hidden_act='gelu_pytorch_tanh',
                              hidden_activation='gelu_pytorch_tanh', rms_norm_eps=1e-6, tie_word_embeddings=True,
                              pad_token_id=0, bos_token_id=2, eos_token_id=1), tr.GemmaForCausalLM
    if kind == 'gemma2_2b':
        return tr.Gemma2Config(vocab_size=256000, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26, num_attention_heads=8,
                               num_key_value_heads=4, head_dim=256, max_position_embeddings=8192, hidden_activation='gelu_pytorch_tanh',
                               final_logit_softcapping=30.0, attn_logit_softcapping=50.0, query_pre_attn_scalar=256, sliding_window=4096,
                               tie_word_embeddings=True, pad_token_id=0, bos_token_id=2, eos_token_id=1), tr.Gemma2ForCausalLM
    if kind == 'phi2':
        return tr.PhiConfig(vocab_size=51200, hidden_size=2560, intermediate_size=10240, num_hidden_layers=32, num_attention_heads=32,
                            num_key_value_heads=32, resid_pdrop=0.1, embd_pdrop=0.0, attention_dropout=0.0, hidden_act='gelu_new',
                            max_position_embeddings=2048, partial_rotary_factor=0.4, qk_layernorm=False, tie_word_embeddings=False,
                            bos_token_id=50256, eos_token_id=50256), tr.PhiForCausalLM
    if kind == 'phi3_mini':
        return tr.Phi3Config(vocab_size=32064, hidden_size=3072, intermediate_size=8192, num_hidden_layers=32, num_attention_heads=32,
                             num_key_value_heads=32, max_position_embeddings=4096, original_max_position_embeddings=4096, sliding_window=2047,
                             resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0, tie_word_embeddings=False,
                             pad_token_id=32000, bos_token_id=1, eos_token_id=32000), tr.Phi3ForCausalLM
    if kind == 'opt_350m':
        return tr.OPTConfig(vocab_size=50272, hidden_size=1024, num_hidden_layers=24, ffn_dim=4096, num_attention_heads=16,
                            max_position_embeddings=2048, do_layer_norm_before=False, word_embed_proj_dim=512, dropout=0.1,
                            attention_dropout=0.0, activation_function='relu', pad_token_id=1), tr.OPTForCausalLM
    if kind == 'opt_1_3b':
        return tr.OPTConfig(vocab_size=50272, hidden_size=2048, num_hidden_layers=24, ffn_dim=8192, num_attention_heads=32,
                            max_position_embeddings=2048, do_layer_norm_before=True, word_embed_proj_dim=2048, dropout=0.1,
                            attention_dropout=0.0, activation_function='relu', pad_token_id=1), tr.OPTForCausalLM
    if kind == 'mistral_small':
        return tr.MistralConfig(vocab_size=32000, hidden_size=1024, intermediate_size=3584, num_hidden_layers=12, num_attention_heads=16,
                                num_key_value_heads=4, max_position_embeddings=4096, sliding_window=256), tr.MistralForCausalLM
    if kind == 'qwen2_15b':
        return tr.Qwen2Config(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
                              vocab_size=151936, max_position_embeddings=32768, tie_word_embeddings=True), tr.Qwen2ForCausalLM
    if kind == 'bert_large':
        return tr.BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, num_labels=2), \
            tr.BertForSequenceClassification
    if kind == 'flan_t5_base':
        return tr.T5Config(d_model=768, d_ff=2048, num_layers=12, num_decoder_layers=12, num_heads=12, d_kv=64, vocab_size=32128,
                           feed_forward_proj='gated-gelu', tie_word_embeddings=False, dropout_rate=0.1,
                           decoder_start_token_id=0, pad_token_id=0, eos_token_id=1), tr.T5ForConditionalGeneration
    if kind in ('whisper_tiny', 'whisper_base'):
        d, n, h = (384, 4, 6) if kind == 'whisper_tiny' else (512, 6, 8)
        return tr.WhisperConfig(vocab_size=51865, num_mel_bins=80, d_model=d, encoder_layers=n, decoder_layers=n, encoder_attention_heads=h,
                                decoder_attention_heads=h, encoder_ffn_dim=4 * d, decoder_ffn_dim=4 * d, max_source_positions=1500,
                                max_target_positions=448, decoder_start_token_id=50258, pad_token_id=50257, bos_token_id=50257,
                                eos_token_id=50257), tr.WhisperForConditionalGeneration
    if kind == 'clip_b32':
        return tr.CLIPConfig(text_config=dict(vocab_size=49408, hidden_size=512, intermediate_size=2048, num_hidden_layers=12,
                                              num_attention_heads=8, max_position_embeddings=77),
                             vision_config=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                                                image_size=224, patch_size=32),
                             projection_dim=512), tr.CLIPModel
    if kind == 'distilbert':
        return tr.DistilBertConfig(num_labels=2), tr.DistilBertForSequenceClassification
    raise ValueError(kind)


def hf_model(kind, dtype, attn=None):
    cfg, cls = hf_config(kind)
    kwargs = dict(dtype=dtype)
    if attn:
        kwargs['attn_implementation'] = attn
    errors = []
    for where in ('cuda', 'cpu'):
        try:
            with torch.device(where):
                model = cls._from_config(cfg, **kwargs)
            return model.to(dtype).to('cuda')
        except Exception as e:  # noqa: BLE001 - fall back to building on the CPU
            errors.append(f'{where}: {type(e).__name__}: {str(e)[:200]}')
            gc.collect()
            torch.cuda.empty_cache()
    raise RuntimeError(' | '.join(errors))


class MLP(nn.Module):
    def __init__(self, in_features=1024, hidden=4096, num_classes=1000):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x):
        return self.net(x)


BF16, FP16, FP32 = 'bf16', 'fp16', 'fp32'
QKVO = ['q_proj', 'k_proj', 'v_proj', 'o_proj']
CASES = [
    dict(id='gemma_2b_bf16_adamw', hf='gemma_2b', w=BF16, b=4, s=512, task='clm', opt='adamw'),
    dict(id='gemma2_2b_bf16_adamw', hf='gemma2_2b', w=BF16, b=2, s=1024, task='clm', opt='adamw'),
    dict(id='phi2_bf16_adamw', hf='phi2', w=BF16, b=4, s=512, task='clm', opt='adamw'),
    dict(id='phi3_mini_bf16_adamw', hf='phi3_mini', w=BF16, b=2, s=1024, task='clm', opt='adamw'),
    dict(id='opt_350m_fp16_adamw', hf='opt_350m', w=FP16, b=8, s=512, task='clm', opt='adamw'),
    dict(id='opt_1_3b_fp16_eval_nograd', hf='opt_1_3b', w=FP16, b=16, s=1024, task='clm', infer='no_grad'),
    dict(id='mistral_small_sliding_ampbf16', hf='mistral_small', w=FP32, b=8, s=1024, task='clm', opt='adamw', amp='bf16'),
    dict(id='qwen2_15b_lora_r16_ckpt', hf='qwen2_15b', w=BF16, b=8, s=1024, task='clm', opt='adamw', ckpt=True, input_grads=True,
         lora=dict(r=16, alpha=32, dropout=0.05, targets=QKVO)),
    dict(id='bert_large_trainer_bf16_ga4', hf='bert_large', labels=2, w=FP32, b=8, s=512, task='cls', opt='trainer', amp='bf16', ga=4),
    dict(id='flan_t5_base_s2s_tgt128', hf='flan_t5_base', w=FP32, b=16, s=512, t=128, task='s2s', opt='adamw'),
    dict(id='whisper_tiny_fp32_adamw', hf='whisper_tiny', w=FP32, b=32, s=128, task='asr', opt='adamw'),
    dict(id='whisper_base_ampbf16_adamw', hf='whisper_base', w=FP32, b=32, s=128, task='asr', opt='adamw', amp='bf16'),
    dict(id='clip_vit_b32_contrastive_ampbf16', hf='clip_b32', w=FP32, b=256, s=77, i=224, task='clip', opt='adamw', amp='bf16'),
    dict(id='distilbert_eval_keep_logits', hf='distilbert', labels=2, w=FP32, b=64, s=256, task='cls_nolabels', infer='keep', batches=10),
    dict(id='resnet50_channels_last_ampbf16', tv='resnet50', classes=1000, b=128, i=224, opt='sgd_momentum', amp='bf16', channels_last=True),
    dict(id='custom_mlp_huge_batch', custom='mlp', classes=1000, b=65536, f=1024, opt='adam'),
]

DTYPES = {BF16: torch.bfloat16, FP16: torch.float16, FP32: torch.float32}


def build(c):
    torch.manual_seed(0)
    info = {}
    if 'hf' in c:
        model = hf_model(c['hf'], DTYPES[c['w']], c.get('attn'))
        info['attn_impl'] = getattr(model.config, '_attn_implementation', None)
        if c.get('ckpt'):
            model.config.use_cache = False
            model.gradient_checkpointing_enable()
        if c.get('input_grads'):
            model.enable_input_require_grads()
        if c.get('lora'):
            lo = c['lora']
            model, info['lora_impl'] = v.apply_lora(model, lo['r'], lo['alpha'], lo['dropout'], lo['targets'])
    elif 'tv' in c:
        model = v.tv_model(c['tv'], c['classes'])
        if c.get('channels_last'):
            model = model.to(memory_format=torch.channels_last)
    else:
        with torch.device('cuda'):
            model = MLP(c['f'], 4096, c['classes'])
    return model, info


def make_batch(c, model):
    g = torch.Generator(device='cuda')
    g.manual_seed(1234)
    b = c['b']
    ri = lambda hi, shape: torch.randint(0, hi, shape, device='cuda', generator=g)  # noqa: E731
    if 'hf' in c:
        task = c['task']
        if task == 'clip':
            vocab = model.config.text_config.vocab_size
            ids = ri(vocab, (b, c['s']))
            return dict(input_ids=ids, attention_mask=torch.ones_like(ids),
                        pixel_values=torch.randn(b, 3, c['i'], c['i'], device='cuda', generator=g), return_loss=True)
        vocab = model.config.vocab_size
        if task == 'asr':
            return dict(input_features=torch.randn(b, 80, 3000, device='cuda', generator=g), labels=ri(vocab, (b, c['s'])))
        ids = ri(vocab, (b, c['s']))
        mask = torch.ones_like(ids)
        if task == 'clm':
            return dict(input_ids=ids, attention_mask=mask, labels=ids)
        if task == 's2s':
            return dict(input_ids=ids, attention_mask=mask, labels=ri(vocab, (b, c.get('t', c['s']))))
        if task == 'cls_nolabels':
            return dict(input_ids=ids, attention_mask=mask)
        return dict(input_ids=ids, attention_mask=mask, labels=ri(c['labels'], (b,)))
    if 'tv' in c:
        x = torch.randn(b, 3, c['i'], c['i'], device='cuda', generator=g)
        if c.get('channels_last'):
            x = x.to(memory_format=torch.channels_last)
        return dict(x=x, y=ri(c['classes'], (b,)))
    return dict(x=torch.randn(b, c['f'], device='cuda', generator=g), y=ri(c['classes'], (b,)))


def forward_loss(c, model, batch):
    if 'hf' in c:
        out = model(**batch)
        return out, getattr(out, 'loss', None)
    out = model(batch['x'])
    return out, F.cross_entropy(out, batch['y'])


def run(c):
    rec = dict(c)
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    rec['alloc_at_start'] = torch.cuda.memory_allocated()
    model, info = build(c)
    rec.update(info)
    rec['param_count'] = sum(p.numel() for p in model.parameters())
    rec['trainable_param_count'] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    rec['param_dtypes'] = sorted({str(p.dtype) for p in model.parameters()})
    batch = make_batch(c, model)
    if c.get('infer'):
        model.eval()
        torch.cuda.synchronize()
        rec['alloc_before_loop'] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        kept, peaks = [], []
        for _ in range(c.get('batches', 3)):
            ctx = torch.no_grad() if c['infer'] == 'no_grad' else nullcontext()
            with ctx, v.autocast(c.get('amp')):
                out, loss = forward_loss(c, model, batch)  # `out` of the previous batch lives until rebound, as in the script
            if c['infer'] == 'keep':
                kept.append(out.logits)  # the script's all_logits.append(outputs.logits): each keeps its graph
            elif loss is not None:
                loss.item()
            torch.cuda.synchronize()
            peaks.append(torch.cuda.max_memory_allocated())
        rec['peak_alloc'] = torch.cuda.max_memory_allocated()
        rec['peak_reserved'] = torch.cuda.max_memory_reserved()
        rec['peak_after_each_batch'] = peaks
        del out, loss, kept
    else:
        model.train()
        opt = v.make_opt(c['opt'], model.parameters())
        trainer = c['opt'] == 'trainer'
        ga = c.get('ga', 1)
        torch.cuda.synchronize()
        rec['alloc_before_loop'] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        phase_peaks = []
        for _ in range(3):
            for _ in range(ga):
                with v.autocast(c.get('amp')):
                    out, loss = forward_loss(c, model, batch)
                    if ga > 1:
                        loss = loss / ga
                if trainer:
                    del out  # Trainer.compute_loss returns the loss only
                    out = None
                fwd = torch.cuda.max_memory_allocated()
                loss.backward()
                del out, loss
            bwd = torch.cuda.max_memory_allocated()
            if trainer:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            phase_peaks.append(dict(forward=fwd, backward=bwd, step=torch.cuda.max_memory_allocated()))
        rec['peak_alloc'] = torch.cuda.max_memory_allocated()
        rec['peak_reserved'] = torch.cuda.max_memory_reserved()
        rec['cumulative_peaks_per_step'] = phase_peaks
        rec['opt_state_bytes'] = sum(t.numel() * t.element_size() for st in opt.state.values() for t in st.values()
                                     if torch.is_tensor(t) and t.is_cuda)
        del opt
    del model, batch
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default='.')
    ap.add_argument('--budget', type=float, default=470.0)
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
    meta['baseline_alloc_after_lib_init'] = v.init_libraries()
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
            'T', rec.get('trainable_param_count'), rec.get('attn_impl', ''), rec.get('lora_impl', ''), rec['error'] or '')
        with open(f'{args.out}/validate2.json', 'w') as f:
            json.dump(dict(meta=meta, runs=runs), f, indent=1)
    log('done')


if __name__ == '__main__':
    main()
