# Peaks of models built from parts of torchvision / timm models (the "parts" helper's fixtures in
# test/fixtures/estimator/library-parts/ and the shapes around them), to check the estimator's sizing of parts.
# python probe_parts.py [OUT.json]   (results/parts.json once run on the H200.)
# Each row: a fresh model on the GPU, two steps; peak = torch.cuda.max_memory_allocated() from before the model was
# made (weights, optimizer state, activations), as the held-out harness measures a whole script.
import json, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
import torchvision
from torchvision import models as M
import timm

MIB = 2 ** 20
dev = "cuda"
res = {"torch": torch.__version__, "torchvision": torchvision.__version__, "timm": timm.__version__, "rows": []}
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)

def count(m, trainable=False):
    return sum(p.numel() for p in m.parameters() if p.requires_grad or not trainable)

def row(name, fn, **info):
    rec = {"name": name, **info}
    t0 = time.time()
    try:
        torch.cuda.empty_cache(); torch.cuda.synchronize()
        rec["base_mib"] = round(torch.cuda.memory_allocated() / MIB, 1)
        torch.cuda.reset_peak_memory_stats()
        rec.update(fn())
        torch.cuda.synchronize()
        rec["peak_mib"] = round(torch.cuda.max_memory_allocated() / MIB, 1)
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)

class Head(nn.Module):
    """A backbone (a part of a library model), global average pooling, a linear head."""
    def __init__(self, body, width, classes=10):
        super().__init__()
        self.body, self.head = body, nn.Linear(width, classes)
    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))

class Seg(nn.Module):
    """timm features_only encoder, a 1x1 decoder on its last map, upsampled to the image."""
    def __init__(self, name, out_indices=None, classes=21):
        super().__init__()
        kw = {} if out_indices is None else {"out_indices": out_indices}
        self.encoder = timm.create_model(name, features_only=True, pretrained=False, **kw)
        self.dec = nn.Conv2d(self.encoder.feature_info.channels()[-1], classes, 1)
    def forward(self, x):
        return F.interpolate(self.dec(self.encoder(x)[-1]), size=x.shape[-2:])

def train(make, batch, size, amp=None, classes=10, dense=False, opt="adamw", steps=2):
    def fn():
        m = make().to(dev).train()
        params = [p for p in m.parameters() if p.requires_grad]
        o = torch.optim.AdamW(params, lr=1e-4) if opt == "adamw" else torch.optim.SGD(params, lr=0.01, momentum=0.9)
        for _ in range(steps):
            x = torch.randn(batch, 3, size, size, device=dev)
            y = torch.randint(0, classes, (batch, size, size) if dense else (batch,), device=dev)
            with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
                out = m(x)
            loss = F.cross_entropy(out.float(), y)
            loss.backward(); o.step(); o.zero_grad(set_to_none=True)
        return {"params": count(m), "trainable": count(m, True)}
    return fn

def r50_children(k):
    return nn.Sequential(*list(M.resnet50(weights=None).children())[:-k])

def frozen(body):
    for p in body.parameters():
        p.requires_grad = False
    return body

row("resnet50_children[:-2]_head", train(lambda: Head(r50_children(2), 2048), 64, 224), batch=64, size=224)
row("resnet50_children[:-2]_head_bf16", train(lambda: Head(r50_children(2), 2048), 64, 224, amp=torch.bfloat16), batch=64, size=224, amp="bf16")
row("resnet50_whole_fc10", train(lambda: M.resnet50(weights=None, num_classes=10), 64, 224), batch=64, size=224)
row("resnet50_children[:-2]_frozen_head", train(lambda: Head(frozen(r50_children(2)), 2048), 64, 224), batch=64, size=224, frozen=True)
row("mobilenet_v3_large_features_head", train(lambda: Head(M.mobilenet_v3_large(weights=None).features, 960), 64, 224), batch=64, size=224)
row("efficientnet_b0_features_head", train(lambda: Head(M.efficientnet_b0(weights=None).features, 1280), 64, 224), batch=64, size=224)
row("timm_resnet34_features_only_seg512", train(lambda: Seg("resnet34"), 16, 512, classes=21, dense=True, opt="sgd"), batch=16, size=512)
row("timm_resnet50_out123_seg384", train(lambda: Seg("resnet50", (1, 2, 3)), 8, 384, classes=21, dense=True, opt="sgd"), batch=8, size=384)
row("resnet50_dilated_parts_seg512", train(lambda: Head(nn.Sequential(*list(M.resnet50(weights=None, replace_stride_with_dilation=[False, True, True]).children())[:-2]), 2048), 8, 512), batch=8, size=512, dilated=True)

out = sys.argv[1] if len(sys.argv) > 1 else "parts.json"
with open(out, "w") as f:
    json.dump(res, f, indent=1)
