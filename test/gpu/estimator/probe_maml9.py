"""What a meta-learning step keeps (issue #13, held-out set 8): forwards whose graphs one backward runs through.

For a few nets (a Conv4 with BatchNorm and ReLU as in MAML, the same without BatchNorm, MLPs with ReLU and tanh):
  - plain_kept: what one forward and its loss keep for backward, per row (MiB above the memory before it);
  - inner_second: what one inner step with create_graph=True keeps once its fast weights are made (the forward's
    saved tensors, the gradient's own graph and the fast weights), with `fast_weights` the weights' bytes;
  - inner_first: the same without create_graph (only the fast weights should stay);
  - maml: whole meta steps (meta_batch tasks, inner_steps steps on `support` rows, one query forward on `query`
    rows, query losses summed, one backward), second order and first order: the memory kept just before the meta
    backward and the step's peak, both above the memory before the step (weights, Adam states and grads excluded).
Prints one JSON line per record and writes $OUT/probe_maml9.json. Runs in well under 200 s on an H200.
"""
import json
import os
import time
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

DEV = "cuda"
MIB = 2 ** 20
OUT = os.environ.get("OUT", ".")
T0 = time.time()


def conv4(bn=True, hidden=64, size=84, classes=5):
    def block(cin, cout):
        layers = [nn.Conv2d(cin, cout, 3, padding=1)]
        if bn:
            layers.append(nn.BatchNorm2d(cout, track_running_stats=False))
        layers += [nn.ReLU(), nn.MaxPool2d(2)]
        return layers
    return lambda: nn.Sequential(*block(3, hidden), *block(hidden, hidden), *block(hidden, hidden), *block(hidden, hidden),
                                 nn.Flatten(), nn.Linear(hidden * (size // 16) ** 2, classes))


def mlp(widths, act):
    def build():
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(a, b), act()]
        return nn.Sequential(*layers[:-1])
    return build


def settle():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated()


def mib(n):
    return round(n / MIB, 2)


def inner(model, params, x, y, lr, create_graph):
    loss = F.cross_entropy(functional_call(model, params, (x,)), y)
    grads = torch.autograd.grad(loss, list(params.values()), create_graph=create_graph)
    return OrderedDict((name, w - lr * g) for (name, w), g in zip(params.items(), grads))


def per_step(name, build, rows, shape, classes):
    model = build().to(DEV)
    params = OrderedDict(model.named_parameters())
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    x = torch.randn(rows, *shape, device=DEV)
    y = torch.randint(0, classes, (rows,), device=DEV)
    rec = {"name": name, "rows": rows, "params": sum(p.numel() for p in model.parameters()), "fast_weights": mib(weight_bytes)}
    for _ in range(2):  # the second pass is the one recorded (cuDNN and the allocator settled)
        base = settle()
        loss = F.cross_entropy(model(x), y)
        rec["plain_kept"] = mib(torch.cuda.memory_allocated() - base)
        loss.backward()
        rec["plain_peak"] = mib(torch.cuda.max_memory_allocated() - base)
        del loss
        model.zero_grad(set_to_none=True)
        for create_graph, key in ((True, "inner_second"), (False, "inner_first")):
            base = settle()
            fast = inner(model, params, x, y, 0.01, create_graph)
            rec[key] = mib(torch.cuda.memory_allocated() - base)
            rec[key + "_peak"] = mib(torch.cuda.max_memory_allocated() - base)
            del fast
    print(json.dumps(rec), flush=True)
    return rec


def maml(name, build, shape, classes, meta_batch, steps, support, query, second_order):
    model = build().to(DEV)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rec = {"name": name, "meta_batch": meta_batch, "inner_steps": steps, "support": support, "query": query, "second_order": second_order}
    for _ in range(2):
        opt.zero_grad(set_to_none=True)
        base = settle()
        params = dict(model.named_parameters())
        meta_loss = 0.0
        for _ in range(meta_batch):
            xs = torch.randn(support, *shape, device=DEV)
            ys = torch.randint(0, classes, (support,), device=DEV)
            xq = torch.randn(query, *shape, device=DEV)
            yq = torch.randint(0, classes, (query,), device=DEV)
            fast = OrderedDict(params)
            for _ in range(steps):
                fast = inner(model, fast, xs, ys, 0.01, second_order)
            meta_loss = meta_loss + F.cross_entropy(functional_call(model, fast, (xq,)), yq)
        rec["kept_before_backward"] = mib(torch.cuda.memory_allocated() - base)
        rec["peak_before_backward"] = mib(torch.cuda.max_memory_allocated() - base)
        (meta_loss / meta_batch).backward()
        rec["peak"] = mib(torch.cuda.max_memory_allocated() - base)
        del meta_loss, fast, params
        opt.step()
    print(json.dumps(rec), flush=True)
    return rec


NETS = [
    ("conv4_bn_relu_84", conv4(bn=True), (3, 84, 84), 5),
    ("conv4_relu_84", conv4(bn=False), (3, 84, 84), 5),
    ("conv4_bn_relu_28_w32", conv4(bn=True, hidden=32, size=28), (3, 28, 28), 5),
    ("mlp_relu_784_1024x3", mlp([784, 1024, 1024, 1024, 10], nn.ReLU), (784,), 10),
    ("mlp_tanh_784_1024x3", mlp([784, 1024, 1024, 1024, 10], nn.Tanh), (784,), 10),
    ("mlp_gelu_784_1024x3", mlp([784, 1024, 1024, 1024, 10], nn.GELU), (784,), 10),
]

records = {"meta": {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "unit": "MiB"}, "per_step": [], "maml": []}
for name, build, shape, classes in NETS:
    for rows in ((25, 100) if len(shape) == 3 else (256, 1024)):
        try:
            records["per_step"].append(per_step(name, build, rows, shape, classes))
        except Exception as e:  # noqa: BLE001 - recorded, the next case runs
            records["per_step"].append({"name": name, "rows": rows, "error": repr(e)[:300]})
for name, build, shape, classes in NETS[:2] + NETS[3:5]:
    rows = (25, 75) if len(shape) == 3 else (256, 512)
    for meta_batch, steps in ((4, 5), (2, 3), (1, 1)):
        for second_order in (True, False):
            try:
                records["maml"].append(maml(name, build, shape, classes, meta_batch, steps, rows[0], rows[1], second_order))
            except Exception as e:  # noqa: BLE001
                records["maml"].append({"name": name, "error": repr(e)[:300]})
records["meta"]["seconds"] = round(time.time() - T0, 1)
with open(os.path.join(OUT, "probe_maml9.json"), "w") as f:
    json.dump(records, f, indent=1)
print("done in", records["meta"]["seconds"], "s", flush=True)
