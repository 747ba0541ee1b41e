# Where Wav2Vec2ForCTC / HubertForCTC spend their peak (NVIDIA H200, torch 2.11, transformers 5.17): per
# configuration (feature encoder frozen or not, gradient checkpointing, fp16 autocast or fp32, base and large-lv60
# shapes, no-grad eval), the peak of the step's forward, backward and optimizer step, and the peak inside the feature
# encoder, the feature projection, the encoder and the head, with memory at each part's start and end.
# python probe_wav2vec2.py > wav2vec2.json  (results/wav2vec2.json: one run, 2026-12-02, beside probe_detection.py.)
import json, sys, time, torch
import transformers
from transformers import Wav2Vec2Config, Wav2Vec2ForCTC, HubertConfig, HubertForCTC
MIB = 2**20
def mib(x): return round(x / MIB, 1)
dev = "cuda"
res = {"torch": torch.__version__, "transformers": transformers.__version__, "runs": []}
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
running = [0]
def cut():
    torch.cuda.synchronize(); p = torch.cuda.max_memory_allocated(); running[0] = max(running[0], p); torch.cuda.reset_peak_memory_stats(); return p

LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, feat_extract_norm="layer",
             do_stable_layer_norm=True, conv_bias=True)

def run(label, family="wav2vec2", B=16, samples=192000, freeze=True, ckpt=True, amp="fp16", mode="train", labels_len=160, steps=2, **cfg):
    rec = {"label": label, "family": family, "batch": B, "samples": samples, "freeze": freeze, "ckpt": ckpt, "amp": amp, "mode": mode, "cfg": cfg}
    t0 = time.time()
    try:
        torch.cuda.empty_cache()
        base = dict(vocab_size=32, layerdrop=0.0, mask_time_prob=0.05, ctc_loss_reduction="mean", pad_token_id=0)
        base.update(cfg)
        if family == "hubert":
            model = HubertForCTC(HubertConfig(**base))
        else:
            model = Wav2Vec2ForCTC(Wav2Vec2Config(**base))
        if freeze: model.freeze_feature_encoder()
        if ckpt: model.gradient_checkpointing_enable()
        model.to(dev)
        rec["params"] = sum(p.numel() for p in model.parameters())
        rec["trainable"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
        inner = model.wav2vec2 if family == "wav2vec2" else model.hubert
        hooked = [("feature_extractor", inner.feature_extractor), ("feature_projection", inner.feature_projection), ("encoder", inner.encoder), ("lm_head", model.lm_head)]
        parts = []
        def pre(m, inp):
            cut(); m._start = torch.cuda.memory_allocated()
        def post(m, inp, out):
            p = cut(); o = out[0] if isinstance(out, tuple) else getattr(out, "last_hidden_state", out)
            parts.append({"part": m._name, "start": mib(m._start), "peak": mib(p), "end": mib(torch.cuda.memory_allocated()),
                          "out": list(o.shape) if torch.is_tensor(o) else None, "dtype": str(o.dtype) if torch.is_tensor(o) else None})
        hs = []
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(amp)
        if mode == "train":
            model.train()
            opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
            scaler = torch.amp.GradScaler("cuda", init_scale=1024, enabled=amp == "fp16")
            for s in range(steps):
                audio = torch.randn(B, samples, device=dev) * 0.1
                labels = torch.randint(1, 32, (B, labels_len), device=dev)
                last = s == steps - 1
                if last:
                    cut(); running[0] = 0; rec["step_start"] = mib(torch.cuda.memory_allocated())
                    for n, m in hooked:
                        m._name = n; hs += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
                with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
                    loss = model(input_values=audio, labels=labels).loss
                if last:
                    rec["forward_peak"] = mib(cut()); rec["after_forward"] = mib(torch.cuda.memory_allocated())
                    for h in hs: h.remove()
                opt.zero_grad()
                scaler.scale(loss).backward()
                if last:
                    rec["backward_peak"] = mib(cut()); rec["after_backward"] = mib(torch.cuda.memory_allocated())
                scaler.unscale_(opt)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(opt); scaler.update()
                if last: rec["step_peak"] = mib(cut())
                del loss, audio, labels
        else:
            model.eval()
            with torch.no_grad():
                for s in range(steps):
                    audio = torch.randn(B, samples, device=dev) * 0.1
                    last = s == steps - 1
                    if last:
                        cut(); running[0] = 0; rec["step_start"] = mib(torch.cuda.memory_allocated())
                        for n, m in hooked:
                            m._name = n; hs += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
                    with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
                        logits = model(input_values=audio).logits
                    if last:
                        rec["forward_peak"] = mib(cut())
                        for h in hs: h.remove()
        rec["peak"] = mib(running[0]); rec["parts"] = parts
        del model
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["wall_s"] = round(time.time() - t0, 2)
    res["runs"].append(rec)
    print(json.dumps(rec), file=sys.stderr, flush=True)

# Parameter counts of the public checkpoints' configs (typed from their config.json), built on the meta device.
STABLE = dict(feat_extract_norm="layer", do_stable_layer_norm=True, conv_bias=True)
counts = {}
for label, cls, cfg in [
    ("wav2vec2-base-960h", Wav2Vec2ForCTC, dict(vocab_size=32)),
    ("wav2vec2-large-960h", Wav2Vec2ForCTC, dict(vocab_size=32, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)),
    ("wav2vec2-large-960h-lv60-self", Wav2Vec2ForCTC, dict(vocab_size=32, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, **STABLE)),
    ("hubert-large-ls960-ft", HubertForCTC, dict(vocab_size=32, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, **STABLE)),
    ("hubert-base-ls960 (CTC 32)", HubertForCTC, dict(vocab_size=32)),
    ("wav2vec2-base no mask", Wav2Vec2ForCTC, dict(vocab_size=32, mask_time_prob=0.0)),
]:
    with torch.device("meta"):
        m = cls((HubertConfig if cls is HubertForCTC else Wav2Vec2Config)(**cfg))
    counts[label] = sum(p.numel() for p in m.parameters())
    for base_label, base in [("Wav2Vec2Model", getattr(m, "wav2vec2", None)), ("HubertModel", getattr(m, "hubert", None))]:
        if base is not None: counts[label + " base"] = sum(p.numel() for p in base.parameters())
res["params"] = counts
print(json.dumps(counts), file=sys.stderr, flush=True)
run("holdout4 script")
run("no ckpt", ckpt=False)
run("not frozen, no ckpt", B=8, freeze=False, ckpt=False)
run("fp32 frozen no ckpt", B=8, amp=None, ckpt=False)
run("fp32 not frozen no ckpt", B=4, amp=None, freeze=False, ckpt=False)
run("hubert base fp16 frozen ckpt", family="hubert", B=16)
run("large-lv60 fp16 frozen", B=4, samples=160000, ckpt=False, **LARGE)
run("eval nograd fp32", B=16, mode="eval", amp=None)
print(json.dumps(res, indent=1))
