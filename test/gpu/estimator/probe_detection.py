# Where torchvision's detectors spend their peak (NVIDIA H200, torch 2.11, torchvision 0.26): for each detector at
# a few image sizes and batches, in train (SGD momentum, zero_grad / forward / backward / step) and in eval under
# no_grad, the peak of the step and the peak inside each top-level part (transform, backbone, rpn, roi_heads, head,
# anchor_generator), with the memory at each part's start and end and the shapes the transform and backbone made.
# python probe_detection.py > detection.json  (results/detection.json: one run, 2026-12-02.) In that run the
# keypoint R-CNN row gave labels 1..9 to its 2-class model, a device-side assert that ended the CUDA context: it and
# every row after it (the k=30 rows, the 320 model, RetinaNet at 600x900 in training, SSD, the segmentation rows)
# are errors, not measurements. Mask R-CNN's evaluation rows start above the others (memory left by the runs before
# them): compare their peak over step_start.
import json, sys, time, torch, torchvision
from torchvision.models import detection as D
MIB = 2**20
def mib(x): return round(x / MIB, 1)
dev = "cuda"
torch.backends.cudnn.benchmark = False
res = {"torch": torch.__version__, "torchvision": torchvision.__version__, "runs": []}
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)  # cuBLAS init outside the runs

class Tracker:
    def __init__(self):
        self.running = 0; self.parts = []
    def reset(self):
        torch.cuda.synchronize(); self.running = 0; torch.cuda.reset_peak_memory_stats()
    def cut(self):
        torch.cuda.synchronize(); p = torch.cuda.max_memory_allocated(); self.running = max(self.running, p)
        torch.cuda.reset_peak_memory_stats(); return p
    def hook(self, model):
        hs = []
        for name, m in model.named_children():
            def pre(mod, inp, name=name):
                self.cut(); mod._start = torch.cuda.memory_allocated()
            def post(mod, inp, out, name=name):
                p = self.cut(); e = torch.cuda.memory_allocated()
                rec = {"part": name, "start": mib(mod._start), "peak": mib(p), "end": mib(e)}
                if name == "transform":
                    rec["images"] = list(out[0].tensors.shape)
                if name == "backbone":
                    feats = out if isinstance(out, dict) else {"0": out}
                    rec["features"] = {k: list(v.shape) for k, v in feats.items()}
                self.parts.append(rec)
            hs += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
        return hs

def targets_for(B, H, W, k, kind):
    ts = []
    for _ in range(B):
        xy = torch.rand(k, 2) * torch.tensor([W * 0.6, H * 0.6]); wh = torch.rand(k, 2) * torch.tensor([W * 0.3, H * 0.3]) + 16
        t = {"boxes": torch.cat([xy, xy + wh], 1).to(dev), "labels": torch.randint(1, 10, (k,), device=dev)}
        if kind == "mask":
            t["masks"] = (torch.rand(k, H, W, device=dev) > 0.5).to(torch.uint8)
        if kind == "keypoint":
            kp = torch.rand(k, 17, 3, device=dev); kp[..., 0] *= W; kp[..., 1] *= H; kp[..., 2] = 1
            t["keypoints"] = kp
        ts.append(t)
    return ts

def run(name, mode, B, H, W, k=8, kind="box", num_classes=91, steps=2, **kw):
    rec = {"model": name, "mode": mode, "batch": B, "h": H, "w": W, "boxes": k, "num_classes": num_classes, **kw}
    t0 = time.time()
    try:
        torch.cuda.empty_cache()
        model = getattr(D, name)(weights=None, weights_backbone=None, num_classes=num_classes, **kw).to(dev)
        rec["params"] = sum(p.numel() for p in model.parameters())
        rec["trainable"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
        tr = Tracker()
        if mode == "train":
            model.train()
            opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9, weight_decay=1e-4)
            for s in range(steps):
                images = [torch.rand(3, H, W, device=dev) for _ in range(B)]
                targets = targets_for(B, H, W, k, kind)
                last = s == steps - 1
                if last:
                    tr.reset(); rec["step_start"] = mib(torch.cuda.memory_allocated()); hs = tr.hook(model)
                opt.zero_grad()
                losses = model(images, targets)
                loss = sum(losses.values())
                if last:
                    rec["forward_peak"] = mib(tr.cut()); rec["after_forward"] = mib(torch.cuda.memory_allocated())
                    for h in hs: h.remove()
                loss.backward()
                if last:
                    rec["backward_peak"] = mib(tr.cut()); rec["after_backward"] = mib(torch.cuda.memory_allocated())
                opt.step()
                if last:
                    rec["step_peak"] = mib(tr.cut())
                del losses, loss, images, targets
            rec["peak"] = mib(tr.running)
        else:
            model.eval()
            with torch.no_grad():
                for s in range(steps):
                    images = [torch.rand(3, H, W, device=dev) for _ in range(B)]
                    last = s == steps - 1
                    if last:
                        tr.reset(); rec["step_start"] = mib(torch.cuda.memory_allocated()); hs = tr.hook(model)
                    out = model(images)
                    if last:
                        rec["forward_peak"] = mib(tr.cut()); rec["after_forward"] = mib(torch.cuda.memory_allocated())
                        for h in hs: h.remove()
                    del images
            rec["peak"] = mib(tr.running)
        rec["parts"] = tr.parts
        del model
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["wall_s"] = round(time.time() - t0, 2)
    res["runs"].append(rec)
    print(json.dumps(rec), file=sys.stderr, flush=True)

# Parameter counts (weights_backbone=None: BatchNorm2d, all trainable), built on the meta device.
counts = {}
for name in ["retinanet_resnet50_fpn", "retinanet_resnet50_fpn_v2", "fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2",
             "fasterrcnn_mobilenet_v3_large_fpn", "fasterrcnn_mobilenet_v3_large_320_fpn", "maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2",
             "keypointrcnn_resnet50_fpn", "fcos_resnet50_fpn", "ssd300_vgg16", "ssdlite320_mobilenet_v3_large"]:
    for nc in (91, 21, 2):
        try:
            with torch.device("meta"):
                m = getattr(D, name)(weights=None, weights_backbone=None, num_classes=nc)
            counts[f"{name}/{nc}"] = sum(p.numel() for p in m.parameters())
        except Exception as e:
            counts[f"{name}/{nc}"] = repr(e)[:200]
res["params"] = counts
print(json.dumps(counts), file=sys.stderr, flush=True)
# The two held-out scripts as they run.
run("retinanet_resnet50_fpn", "eval", 16, 600, 900)
run("fasterrcnn_mobilenet_v3_large_fpn", "train", 16, 480, 640, k=12, num_classes=21)
# Sizes and batches per family, train and eval.
for name, kind in [("retinanet_resnet50_fpn", "box"), ("fasterrcnn_mobilenet_v3_large_fpn", "box"), ("fasterrcnn_resnet50_fpn", "box"),
                   ("maskrcnn_resnet50_fpn", "mask")]:
    for mode, B, H, W in [("train", 4, 480, 640), ("train", 2, 800, 800), ("eval", 4, 480, 640), ("eval", 8, 600, 900)]:
        run(name, mode, B, H, W, kind=kind)
for name, kind, nc in [("fasterrcnn_resnet50_fpn_v2", "box", 91), ("keypointrcnn_resnet50_fpn", "keypoint", 2)]:
    for mode in ("train", "eval"):
        run(name, mode, 4, 480, 640, kind=kind, num_classes=nc)
run("fasterrcnn_resnet50_fpn", "train", 4, 480, 640, k=30)
run("maskrcnn_resnet50_fpn", "train", 4, 480, 640, k=30, kind="mask")
run("fasterrcnn_mobilenet_v3_large_320_fpn", "train", 16, 480, 640, k=12, num_classes=21)
run("retinanet_resnet50_fpn", "train", 8, 600, 900)
run("ssd300_vgg16", "train", 32, 480, 640)
run("ssd300_vgg16", "eval", 64, 480, 640)
run("ssdlite320_mobilenet_v3_large", "train", 32, 480, 640)
# Segmentation models on images that are not square (the estimator counts a square of the same area).
from torchvision.models import segmentation as S
def seg(name, mode, B, H, W, classes=19):
    rec = {"model": name, "mode": mode, "batch": B, "h": H, "w": W, "num_classes": classes}
    try:
        torch.cuda.empty_cache()
        model = getattr(S, name)(weights=None, weights_backbone=None, num_classes=classes).to(dev)
        rec["params"] = sum(p.numel() for p in model.parameters())
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        tr = Tracker()
        for s in range(2):
            x = torch.randn(B, 3, H, W, device=dev); y = torch.randint(0, classes, (B, H, W), device=dev)
            if s == 1: tr.reset()
            if mode == "train":
                model.train(); out = model(x)["out"]; loss = torch.nn.functional.cross_entropy(out, y)
                opt.zero_grad(); loss.backward(); opt.step(); del out, loss
            else:
                model.eval()
                with torch.no_grad(): out = model(x)["out"].argmax(1)
        tr.cut(); rec["peak"] = mib(tr.running)
        del model, opt
    except Exception as e:
        rec["error"] = repr(e)[:300]
    res["runs"].append(rec)
    print(json.dumps(rec), file=sys.stderr, flush=True)
seg("deeplabv3_resnet50", "train", 4, 512, 1024)
seg("fcn_resnet50", "eval", 8, 512, 1024)
print(json.dumps(res, indent=1))
