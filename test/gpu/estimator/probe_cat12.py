"""Parameters and memory of the torchvision families the catalog lacks (helper cat12, issue #13): MViT (video),
RAFT (optical flow) and the small classifiers (ShuffleNetV2, SqueezeNet, MNASNet, AlexNet, Swin3D-S/B).

Rows:
  params        parameter count of a model built with its defaults (no weights).
  raft_* / mvit_* / cls_*  one training step (or one no-grad forward), a fresh base each: peak stats reset after the
                model, the optimizer state (one warm-up step) and the inputs exist; kept_mib = allocated after forward
                minus before (what backward will read), fwd_peak_over_mib / bwd_peak_over_mib = peaks over that base,
                step_peak_mib = torch.cuda.max_memory_allocated() over the whole second step (absolute).
python probe_cat12.py   (prints one JSON line per row; under 60 s on an H200.)
"""
import gc, json, time
import torch
import torch.nn.functional as F
import torchvision
from torchvision import models as M
from torchvision.models import video as V
from torchvision.models import optical_flow as OF

MIB = 2 ** 20
dev = "cuda"
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
t_start = time.time()


def mib(n):
    return round(n / MIB, 2)


def count(m):
    return sum(p.numel() for p in m.parameters())


def emit(row):
    print(json.dumps(row), flush=True)


emit({"row": "versions", "torch": torch.__version__, "torchvision": torchvision.__version__})
for name, make in [("mvit_v1_b", V.mvit_v1_b), ("mvit_v2_s", V.mvit_v2_s), ("swin3d_s", V.swin3d_s), ("swin3d_b", V.swin3d_b),
                   ("raft_small", OF.raft_small), ("raft_large", OF.raft_large),
                   ("shufflenet_v2_x0_5", M.shufflenet_v2_x0_5), ("shufflenet_v2_x1_0", M.shufflenet_v2_x1_0),
                   ("shufflenet_v2_x1_5", M.shufflenet_v2_x1_5), ("shufflenet_v2_x2_0", M.shufflenet_v2_x2_0),
                   ("squeezenet1_0", M.squeezenet1_0), ("squeezenet1_1", M.squeezenet1_1),
                   ("mnasnet0_5", M.mnasnet0_5), ("mnasnet0_75", M.mnasnet0_75), ("mnasnet1_0", M.mnasnet1_0), ("mnasnet1_3", M.mnasnet1_3),
                   ("alexnet", M.alexnet)]:
    try:
        emit({"row": "params", "model": name, "params": count(make())})
    except Exception as e:  # noqa: BLE001
        emit({"row": "params", "model": name, "error": repr(e)[:200]})


def step_rows(name, model, make_inputs, loss_of, train=True, amp=None, extra=None):
    """Second of two steps measured (the first makes AdamW's state)."""
    rec = {"row": name, **(extra or {})}
    try:
        gc.collect(); torch.cuda.empty_cache()
        model = model.to(dev)
        model.train(train)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4) if train else None
        for i in range(2):
            inputs = make_inputs()
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            if i == 1:
                rec["base_mib"] = mib(base)
                torch.cuda.reset_peak_memory_stats()
            if train:
                with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
                    out = model(*inputs[0], **inputs[1])
                    loss = loss_of(out, inputs)
                torch.cuda.synchronize()
                kept = torch.cuda.memory_allocated() - base
                fwd = torch.cuda.max_memory_allocated() - base
                if i == 1:
                    torch.cuda.reset_peak_memory_stats()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.cuda.synchronize()
                bwd = torch.cuda.max_memory_allocated() - base
                opt.step()
                del out, loss
            else:
                with torch.inference_mode(), torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
                    out = model(*inputs[0], **inputs[1])
                torch.cuda.synchronize()
                kept, fwd, bwd = 0, torch.cuda.max_memory_allocated() - base, 0
                del out
            if i == 1:
                rec.update({"kept_mib": mib(kept), "fwd_peak_over_mib": mib(fwd), "bwd_peak_over_mib": mib(bwd)})
            del inputs
        rec["params"] = count(model)
        rec["weights_mib"] = mib(sum(p.numel() * p.element_size() for p in model.parameters()))
    except Exception as e:  # noqa: BLE001
        rec["error"] = repr(e)[:300]
    del model
    rec["s"] = round(time.time() - t_start, 1)
    emit(rec)


def flow_inputs(batch, h, w, updates):
    def make():
        a = torch.rand(batch, 3, h, w, device=dev) * 2 - 1
        b = torch.rand(batch, 3, h, w, device=dev) * 2 - 1
        flow = torch.randn(batch, 2, h, w, device=dev)
        return (a, b), {"num_flow_updates": updates, "_flow": flow}
    return make


def sequence_loss(preds, inputs):
    flow = inputs[2]
    return sum(0.8 ** (len(preds) - i - 1) * (p - flow).abs().mean() for i, p in enumerate(preds))


def flow_rows(name, make, batch, h, w, updates, train=True):
    raw = flow_inputs(batch, h, w, updates)
    def make_inputs():
        args, kw = raw()
        flow = kw.pop("_flow")
        return (args, kw, flow)
    step_rows(f"{name}_{'train' if train else 'nograd'}", make(), make_inputs, sequence_loss, train=train,
              extra={"batch": batch, "h": h, "w": w, "updates": updates})


# RAFT: the per-update slope (6 vs 12 updates), the size slope (two crops), both sizes of model, and a no-grad run.
flow_rows("raft_small", OF.raft_small, 4, 368, 496, 12)
flow_rows("raft_small", OF.raft_small, 4, 368, 496, 6)
flow_rows("raft_small", OF.raft_small, 4, 256, 320, 12)
flow_rows("raft_large", OF.raft_large, 4, 368, 496, 12)
flow_rows("raft_large", OF.raft_large, 4, 368, 496, 6)
flow_rows("raft_small", OF.raft_small, 8, 368, 496, 12, train=False)


def clip_inputs(batch, frames, size):
    def make():
        x = torch.randn(batch, 3, frames, size, size, device=dev)
        y = torch.randint(0, 400, (batch,), device=dev)
        return ((x,), {}, y)
    return make


def ce(out, inputs):
    return F.cross_entropy(out, inputs[2])


# MViT: training (fp32 and bf16 autocast) and inference under bf16 autocast; two batches for the slope.
step_rows("mvit_v2_s_train", V.mvit_v2_s(), clip_inputs(2, 16, 224), ce, extra={"batch": 2, "frames": 16, "size": 224})
step_rows("mvit_v2_s_train", V.mvit_v2_s(), clip_inputs(4, 16, 224), ce, extra={"batch": 4, "frames": 16, "size": 224})
step_rows("mvit_v2_s_train_bf16", V.mvit_v2_s(), clip_inputs(4, 16, 224), ce, amp=torch.bfloat16, extra={"batch": 4, "frames": 16, "size": 224})
step_rows("mvit_v2_s_infer_bf16", V.mvit_v2_s(), clip_inputs(16, 16, 224), ce, train=False, amp=torch.bfloat16, extra={"batch": 16, "frames": 16, "size": 224})
step_rows("mvit_v1_b_train", V.mvit_v1_b(), clip_inputs(2, 16, 224), ce, extra={"batch": 2, "frames": 16, "size": 224})


def image_inputs(batch, size):
    def make():
        x = torch.randn(batch, 3, size, size, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)
        return ((x,), {}, y)
    return make


for name, make in [("shufflenet_v2_x1_0", M.shufflenet_v2_x1_0), ("squeezenet1_1", M.squeezenet1_1), ("mnasnet1_0", M.mnasnet1_0), ("alexnet", M.alexnet)]:
    step_rows(f"cls_{name}_train", make(), image_inputs(64, 224), ce, extra={"batch": 64, "size": 224})
