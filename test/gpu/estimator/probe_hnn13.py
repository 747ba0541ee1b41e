"""What a graph kept by torch.autograd.grad(..., create_graph=True) costs per activation (helper hnn13, issue #13),
and what a hand-written soft dice + CE loss on a 3-D volume adds. Own small models, not held-out scripts.

Part "act": an MLP d_in -> width (x depth, each Linear followed by the activation) -> 1, fp32, parameters requiring
grad, input x (rows, d_in) requiring grad. For each activation (Tanh, Softplus, SiLU, GELU, Sigmoid, ELU, ReLU) and
two sizes, all over a base taken after the model and x exist (MiB), and `unit` = rows * width * 4 bytes (one hidden
activation tensor) so each figure can be read as a count of hidden tensors per layer:
  fwd_kept     allocated after H = model(x).sum()            (what the forward keeps for backward)
  grad_kept    allocated after dH = autograd.grad(H, x, create_graph=True)[0] (forward graph + gradient's graph + dH)
  grad_peak    peak during that grad call
  bwd_peak     peak during (dH ** 2).mean().backward()
  chain4_kept / chain4_peak: x_{k+1} = x_k + 0.1 * grad(model(x_k).sum(), x_k, create_graph=True) four times, allocated
               before the loss's backward and the step's peak (is one evaluation's graph additive?).
Part "dice": a 3-conv 3-D net in bf16 autocast gives logits (B, C, D, D, D); loss = CE + soft dice computed as
  probs = logits.float().softmax(1); onehot = F.one_hot(t, C).permute(0, 4, 1, 2, 3).float();
  inter = (probs * onehot).sum((2, 3, 4)); denom = probs.sum((2, 3, 4)) + onehot.sum((2, 3, 4))
  with `logits_mib` the bf16 logits' size; kept_after_net, kept_after_loss, loss_peak (peak while the loss is made),
  bwd_peak, all over the base (model and inputs made).
python probe_hnn13.py   (one JSON line per row, writes $OUT/probe_hnn13.jsonl; well under 90 s on an H200)
"""
import json
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DEV = "cuda"
MIB = 2 ** 20
OUT = os.environ.get("OUT", ".")
T0 = time.time()
ROWS = []


def emit(rec):
    rec["t"] = round(time.time() - T0, 1)
    ROWS.append(rec)
    print(json.dumps(rec), flush=True)


def mib(n):
    return round(n / MIB, 2)


def settle():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated()


def mlp(act, d_in, width, depth):
    layers = [nn.Linear(d_in, width), act()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), act()]
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers).to(DEV)


ACTS = [("Tanh", nn.Tanh), ("Softplus", nn.Softplus), ("SiLU", nn.SiLU), ("GELU", nn.GELU),
        ("GELU_tanh", lambda: nn.GELU(approximate="tanh")), ("Sigmoid", nn.Sigmoid), ("ELU", nn.ELU),
        ("ReLU", nn.ReLU), ("LeakyReLU", nn.LeakyReLU), ("Mish", nn.Mish)]
SIZES = [(512, 4096, 4), (1024, 8192, 3)]  # (width, rows, depth)
D_IN = 16


def act_row(name, act, width, rows, depth):
    model = mlp(act, D_IN, width, depth)
    rec = {"part": "act", "act": name, "width": width, "rows": rows, "depth": depth, "d_in": D_IN,
           "unit": mib(rows * width * 4)}
    for _ in range(2):  # the second pass is recorded
        x = torch.randn(rows, D_IN, device=DEV, requires_grad=True)
        base = settle()
        H = model(x).sum()
        rec["fwd_kept"] = mib(torch.cuda.memory_allocated() - base)
        rec["fwd_peak"] = mib(torch.cuda.max_memory_allocated() - base)
        torch.cuda.reset_peak_memory_stats()
        dH = torch.autograd.grad(H, x, create_graph=True)[0]
        rec["grad_kept"] = mib(torch.cuda.memory_allocated() - base)
        rec["grad_peak"] = mib(torch.cuda.max_memory_allocated() - base)
        torch.cuda.reset_peak_memory_stats()
        loss = dH.pow(2).mean()
        loss.backward()
        rec["bwd_peak"] = mib(torch.cuda.max_memory_allocated() - base)
        del H, dH, loss
        model.zero_grad(set_to_none=True)
        x = torch.randn(rows, D_IN, device=DEV, requires_grad=True)
        base = settle()
        y = x
        for _ in range(4):
            y = y + 0.1 * torch.autograd.grad(model(y).sum(), y, create_graph=True)[0]
        rec["chain4_kept"] = mib(torch.cuda.memory_allocated() - base)
        loss = y.pow(2).mean()
        loss.backward()
        rec["chain4_peak"] = mib(torch.cuda.max_memory_allocated() - base)
        del y, loss, x
        model.zero_grad(set_to_none=True)
    emit(rec)
    del model


def dice_row(batch, classes, size, with_dice):
    net = nn.Sequential(nn.Conv3d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv3d(16, 16, 3, padding=1), nn.ReLU(),
                        nn.Conv3d(16, classes, 1)).to(DEV)
    rec = {"part": "dice", "batch": batch, "classes": classes, "size": size, "with_dice": with_dice,
           "logits_mib": mib(batch * classes * size ** 3 * 2), "voxels_fp32_mib": mib(batch * size ** 3 * 4)}
    for _ in range(2):
        vol = torch.randn(batch, 1, size, size, size, device=DEV)
        seg = torch.randint(0, classes, (batch, size, size, size), device=DEV)
        base = settle()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = net(vol)
            rec["kept_after_net"] = mib(torch.cuda.memory_allocated() - base)
            ce = F.cross_entropy(logits.float(), seg)
            if with_dice:
                probs = logits.float().softmax(1)
                onehot = F.one_hot(seg, classes).permute(0, 4, 1, 2, 3).float()
                inter = (probs * onehot).sum((2, 3, 4))
                denom = probs.sum((2, 3, 4)) + onehot.sum((2, 3, 4))
                dice = 1 - (2 * inter + 1e-5) / (denom + 1e-5)
                loss = ce + dice.mean()
            else:
                loss = ce
        rec["kept_after_loss"] = mib(torch.cuda.memory_allocated() - base)
        rec["loss_peak"] = mib(torch.cuda.max_memory_allocated() - base)
        torch.cuda.reset_peak_memory_stats()
        loss.backward()
        rec["bwd_peak"] = mib(torch.cuda.max_memory_allocated() - base)
        del logits, loss, ce
        if with_dice:
            del probs, onehot, inter, denom, dice
        net.zero_grad(set_to_none=True)
    emit(rec)


_ = torch.ones(1, device=DEV) @ torch.ones(1, 1, device=DEV)
emit({"part": "meta", "torch": torch.__version__, "device": torch.cuda.get_device_name(), "unit": "MiB"})
for name, act in ACTS:
    for width, rows, depth in SIZES:
        try:
            act_row(name, act, width, rows, depth)
        except Exception as e:  # noqa: BLE001 - recorded, the next case runs
            emit({"part": "act", "act": name, "width": width, "rows": rows, "error": repr(e)[:300]})
for batch, classes, size, with_dice in ((2, 14, 96, True), (2, 14, 96, False), (1, 8, 128, True), (1, 8, 128, False)):
    try:
        dice_row(batch, classes, size, with_dice)
    except Exception as e:  # noqa: BLE001
        emit({"part": "dice", "batch": batch, "error": repr(e)[:300]})
with open(os.path.join(OUT, "probe_hnn13.jsonl"), "w") as f:
    for r in ROWS:
        f.write(json.dumps(r) + "\n")
print("done in", round(time.time() - T0, 1), "s", flush=True)
