"""cat7 probe: peaks of training steps the estimator models from set 7's rows.

A. torchvision FCOS (ResNet-50-FPN, random weights, 81 classes), fp32 SGD, batch 8: square 640x640 images (the
   transform's 800x800 batch) and a batch of 640x480 and 480x640 images (each resized to 1066x800 / 800x1066,
   padded together to 1088x1088).
B. timm convnextv2_tiny, batch 32 at 224, AdamW: fp32 and bf16 autocast.
C. torchvision swin_v2_t, batch 32 at 256, AdamW: fp32 and bf16 autocast.
Writes $OUT/cat7.json: peak allocated bytes per case (torch.cuda.max_memory_allocated after 3 steps).
"""
import gc
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
results = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "cases": {}}


def reset():
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def record(name, fn):
    reset()
    start = time.time()
    try:
        extra = fn() or {}
        results["cases"][name] = {"peak_alloc": torch.cuda.max_memory_allocated(), "seconds": round(time.time() - start, 1), **extra}
    except Exception as error:  # report and go on: one failure must not lose the others
        results["cases"][name] = {"error": repr(error)[:500]}
    print(name, results["cases"][name], flush=True)
    reset()


def fcos(shapes):
    from torchvision.models.detection import fcos_resnet50_fpn

    def run():
        model = fcos_resnet50_fpn(weights=None, weights_backbone=None, num_classes=81).cuda().train()
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=1e-4)
        for _ in range(3):
            images = [torch.rand(3, h, w, device="cuda") for h, w in shapes]
            targets = []
            for h, w in shapes:
                xy = torch.rand(6, 2, device="cuda") * torch.tensor([w * 0.7, h * 0.7], device="cuda")
                wh = torch.rand(6, 2, device="cuda") * torch.tensor([w * 0.3, h * 0.3], device="cuda") + 8
                targets.append({"boxes": torch.cat([xy, xy + wh], 1), "labels": torch.randint(1, 81, (6,), device="cuda")})
            losses = sum(model(images, targets).values())
            opt.zero_grad()
            losses.backward()
            opt.step()
        del model, opt, images, targets, losses
        return {"params": 32299670}
    return run


def classifier(build, batch, size, amp):
    def run():
        model = build().cuda().train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for _ in range(3):
            x = torch.randn(batch, 3, size, size, device="cuda")
            y = torch.randint(0, 10, (batch,), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        n = sum(p.numel() for p in model.parameters())
        del model, opt, x, y, loss
        return {"params": n}
    return run


def convnextv2():
    import timm
    return timm.create_model("convnextv2_tiny", pretrained=False, num_classes=10)


def swinv2():
    from torchvision.models import swin_v2_t
    return swin_v2_t(num_classes=10)


record("fcos_square_640", fcos([(640, 640)] * 8))
record("fcos_mixed_640x480_480x640", fcos([(640, 480), (480, 640)] * 4))
for amp in (False, True):
    tag = "bf16" if amp else "fp32"
    record(f"convnextv2_tiny_b32_224_{tag}", classifier(convnextv2, 32, 224, amp))
    record(f"swin_v2_t_b32_256_{tag}", classifier(swinv2, 32, 256, amp))

with open(os.path.join(OUT, "cat7.json"), "w") as f:
    json.dump(results, f, indent=1)
print("done", file=sys.stderr)
