"""Helper grads13 (issue #13): (A) where a training step peaks for each position of optimizer.zero_grad() (start of
the loop, between forward and backward, after optimizer.step()), and (B) what transformers' SwinLayer saves for
backward against timm's SwinTransformerBlock, tensor by tensor.

(A) rows: {"part": "zero_grad", ...} for a nanoGPT-style decoder (AdamW, fp32 weights, bf16 autocast or fp32,
checkpointed blocks or not); the third step is measured: alloc_* = memory_allocated at each point, *_peak =
max_memory_allocated over the phase (reset before it), MiB.
(B) rows: {"part": "saved", ...}: every tensor packed for backward during one forward (saved_tensors_hooks),
parameters and buffers left out, deduplicated by storage, attributed to the module that saved it first; one row per
tensor of the first two blocks of stage 1 (one plain, one shifted), per-module-class totals, and kept_mib (allocated
after forward minus before).
python probe_grads13.py   (about 40 s on an H200.)
"""
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

MIB = 2 ** 20
dev = "cuda"
t0 = time.time()


def emit(row):
    print(json.dumps(row), flush=True)


def mib(x):
    return round(x / MIB, 1)


# ---------------------------------------------------------------- (A) zero_grad positions
class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.h, c // self.h).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, ckpt):
        super().__init__()
        self.ckpt = ckpt
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(2048, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1), device=idx.device))
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.ckpt else blk(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def zero_grad_run(position, ckpt, amp, batch, seq, d=1024, layers=12, vocab=32000, make=None, data=None, label=None):
    rec = {"part": "zero_grad", "position": position, "ckpt": ckpt, "amp": amp, "batch": batch, "seq": seq,
           "d": d, "layers": layers, "vocab": vocab, "model": label or "gpt"}
    try:
        torch.cuda.empty_cache()
        model = (make() if make else GPT(vocab, d, layers, 16, ckpt)).to(dev).train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        rec["params"] = sum(p.numel() for p in model.parameters())
        for i in range(3):
            x, y = data(batch) if data else (torch.randint(0, vocab, (batch, seq), device=dev),
                                             torch.randint(0, vocab, (batch, seq), device=dev))
            measure = i == 2
            if position == "start":
                opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
            a0 = torch.cuda.memory_allocated()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                loss = model(x, y) if not make else LOSSES[label](model(x), y)
            torch.cuda.synchronize()
            a1, p_fwd = torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated()
            if position == "between":
                opt.zero_grad(set_to_none=True)
            a1z = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            loss.backward()
            torch.cuda.synchronize()
            a2, p_bwd = torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            opt.step()
            torch.cuda.synchronize()
            a3, p_step = torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated()
            if position == "after_step":
                opt.zero_grad(set_to_none=True)
            if measure:
                rec.update(alloc_before_fwd=mib(a0), alloc_after_fwd=mib(a1), alloc_after_zero=mib(a1z),
                           alloc_after_bwd=mib(a2), alloc_after_step=mib(a3), fwd_peak=mib(p_fwd),
                           bwd_peak=mib(p_bwd), step_peak=mib(p_step), step_max=mib(max(p_fwd, p_bwd, p_step)))
            del loss
        del model, opt
    except Exception as e:  # noqa: BLE001
        rec["error"] = repr(e)[:200]
    emit(rec)


for amp in (True, False):
    for ckpt in (True, False):
        for position in ("start", "between", "after_step"):
            zero_grad_run(position, ckpt, amp, batch=8, seq=1024)
# A parameter-heavy step (small batch): where the previous gradients outweigh what forward keeps.
for position in ("start", "between", "after_step"):
    zero_grad_run(position, False, True, batch=2, seq=256)


# CNNs with the tutorial order (zero_grad between forward and backward): what the forward's end holds beyond what
# it keeps (fwd_peak - alloc_after_fwd) while the previous gradients are alive, against backward's start.
try:
    import torchvision

    def dice_ce(out, y):
        out = out["out"] if isinstance(out, dict) else out
        prob = out.softmax(1)
        onehot = F.one_hot(y, out.shape[1]).permute(0, 3, 1, 2).float()
        dice = 1 - (2 * (prob * onehot).sum((2, 3)) + 1) / (prob.sum((2, 3)) + onehot.sum((2, 3)) + 1)
        return F.cross_entropy(out, y) + dice.mean()

    LOSSES = {"resnet50_ce": lambda out, y: F.cross_entropy(out, y),
              "fcn_resnet50_dice": dice_ce,
              "vgg16_ce": lambda out, y: F.cross_entropy(out, y)}
    cls_data = lambda b: (torch.randn(b, 3, 224, 224, device=dev), torch.randint(0, 1000, (b,), device=dev))
    seg_data = lambda b: (torch.randn(b, 3, 256, 256, device=dev), torch.randint(0, 21, (b, 256, 256), device=dev))
    for position in ("start", "between"):
        zero_grad_run(position, False, False, 64, 0, make=lambda: torchvision.models.resnet50(), data=cls_data, label="resnet50_ce")
        zero_grad_run(position, False, False, 16, 0, make=lambda: torchvision.models.segmentation.fcn_resnet50(num_classes=21, aux_loss=False, weights=None, weights_backbone=None), data=seg_data, label="fcn_resnet50_dice")
        zero_grad_run(position, False, False, 32, 0, make=lambda: torchvision.models.vgg16(), data=cls_data, label="vgg16_ce")
except Exception as e:  # noqa: BLE001
    emit({"part": "zero_grad", "model": "torchvision", "error": repr(e)[:300]})


# ---------------------------------------------------------------- (B) HF Swin vs timm Swin, saved tensors
def saved_listing(name, model, make_input, amp, batch, detail_prefixes):
    rec = {"part": "saved", "model": name, "amp": amp, "batch": batch}
    try:
        torch.cuda.empty_cache()
        model = model.to(dev).train()
        skip = {p.untyped_storage().data_ptr() for p in model.parameters()}
        skip |= {b.untyped_storage().data_ptr() for b in model.buffers()}
        stack = ["(top)"]
        names = {m: n for n, m in model.named_modules()}
        hooks = []
        for m in model.modules():
            hooks.append(m.register_forward_pre_hook(lambda mod, inp: stack.append(names[mod])))
            hooks.append(m.register_forward_hook(lambda mod, inp, out: (stack.pop(), None)[1]))
        seen = {}
        order = []

        def pack(t):
            try:
                ptr = t.untyped_storage().data_ptr()
                nbytes = t.untyped_storage().nbytes()
            except Exception:  # noqa: BLE001
                return t
            if ptr in skip or ptr in seen or nbytes == 0:
                return t
            producer = type(t.grad_fn).__name__ if t.grad_fn is not None else ("leaf" if t.requires_grad else "nograd")
            seen[ptr] = (stack[-1], producer, list(t.shape), str(t.dtype).replace("torch.", ""), nbytes)
            order.append(ptr)
            return t

        x = make_input(batch)
        for p in model.parameters():
            p.grad = None
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
                out = model(x)
                out = out if isinstance(out, torch.Tensor) else out.pooler_output
                loss = out.float().logsumexp(-1).mean()
        torch.cuda.synchronize()
        kept = torch.cuda.memory_allocated() - base
        for h in hooks:
            h.remove()
        total = sum(v[4] for v in seen.values())
        by_class = {}
        mods = dict(model.named_modules())
        for ptr in order:
            path, producer, shape, dtype, nbytes = seen[ptr]
            cls = type(mods[path]).__name__ if path in mods else path
            by_class[cls] = by_class.get(cls, 0) + nbytes
            if any(path.startswith(pfx) for pfx in detail_prefixes):
                emit({"part": "saved_tensor", "model": name, "amp": amp, "module": path, "class": cls, "producer": producer,
                      "shape": shape, "dtype": dtype, "bytes_per_sample": nbytes // batch})
        rec.update(kept_mib=mib(kept), saved_total_mib=mib(total), by_class_mib={k: mib(v) for k, v in by_class.items()},
                   n_saved=len(order))
        loss.backward()
        del model, out, loss
    except Exception as e:  # noqa: BLE001
        rec["error"] = repr(e)[:300]
    emit(rec)


images = lambda b: torch.randn(b, 3, 224, 224, device=dev)
try:
    from transformers import SwinConfig, SwinModel
    import transformers
    emit({"part": "versions", "torch": torch.__version__, "transformers": transformers.__version__})
    for amp in (False, True):
        for drop in (0.0, 0.3):
            saved_listing(f"hf_swin_t_drop{drop}", SwinModel(SwinConfig(drop_path_rate=drop)), images, amp, 16,
                          ["encoder.layers.0.blocks.0", "encoder.layers.0.blocks.1", "encoder.layers.0.downsample"]
                          if drop == 0.0 else [])
except Exception as e:  # noqa: BLE001
    emit({"part": "saved", "model": "hf_swin", "error": repr(e)[:300]})
try:
    import timm
    probe_model = timm.create_model("swin_tiny_patch4_window7_224", num_classes=0)
    emit({"part": "versions", "timm": timm.__version__,
          "timm_swin_fused_attn": bool(getattr(probe_model.layers[0].blocks[0].attn, "fused_attn", False))})
    for amp in (False, True):
        saved_listing("timm_swin_tiny", timm.create_model("swin_tiny_patch4_window7_224", num_classes=0), images, amp, 16,
                      ["layers.0.blocks.0", "layers.0.blocks.1", "layers.1.downsample"])
except Exception as e:  # noqa: BLE001
    emit({"part": "saved", "model": "timm_swin", "error": repr(e)[:300]})
emit({"part": "done", "wall_s": round(time.time() - t0, 1)})
