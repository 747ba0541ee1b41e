"""torchvision's SSD300-VGG16 and SSDlite320-MobileNetV3-Large on the H200: enough rows to calibrate the estimator's
model of them on some and validate it on the others. Batches, image sizes, class counts, training (SGD with momentum:
zero_grad, forward, backward, step) and no-grad evaluation, fp16 autocast, the structure the default ImageNet backbone
weights build (SSD300: conv1_1 and conv1_2 frozen, trainable_backbone_layers=4; SSDlite: MobileNetV3's full-width
last stage instead of the reduced tail that weights_backbone=None builds). No weights are downloaded there: that
structure is built by hand (requires_grad off; torchvision's mobilenet_v3_large called with reduced_tail=False).

Each row runs 2 steps and records the second: its peak (max_memory_allocated), the memory at its start, after the
forward and after the backward, and the peak inside each part (a forward pre-hook and hook on the transform, the
backbone's feature blocks and extra blocks, the two heads, the anchor generator; `gap:NAME` is what ran between the
previous part and NAME, SSD300's L2Norm before `backbone.extra.0`; `tail` is what follows the last part: matching and
the loss in training, the post-processing in evaluation). Parameter counts built on the meta device.
Run: python probe_ssd.py OUT.json
"""
import gc, json, sys, time
import torch, torchvision
from torchvision.models import detection as D
import torchvision.models.detection.ssdlite as ssdlite_module

dev = "cuda"
MIB = 2 ** 20
torch.backends.cudnn.benchmark = False
res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "torchvision": torchvision.__version__, "runs": []}
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)


def mib(x):
    return round(x / MIB, 1)


def counts(model):
    return sum(p.numel() for p in model.parameters()), sum(p.numel() for p in model.parameters() if p.requires_grad)


_mobilenet_v3_large = ssdlite_module.mobilenet_v3_large


def full_tail_mobilenet(**kw):
    kw["reduced_tail"] = False
    return _mobilenet_v3_large(**kw)


def build(name, classes, imagenet_structure=False):
    """weights=None, weights_backbone=None; imagenet_structure: what the default backbone weights build, untrained."""
    if name == "ssdlite320_mobilenet_v3_large" and imagenet_structure:
        ssdlite_module.mobilenet_v3_large = full_tail_mobilenet
        try:
            return D.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=classes)
        finally:
            ssdlite_module.mobilenet_v3_large = _mobilenet_v3_large
    model = getattr(D, name)(weights=None, weights_backbone=None, num_classes=classes)
    if imagenet_structure:
        # trainable_backbone_layers=4 over pretrained backbone weights: features[:4] (conv1_1, conv1_2) frozen.
        for p in model.backbone.features[:4].parameters():
            p.requires_grad_(False)
    return model


PART_NAMES = ["transform", "backbone.features", "backbone.features.0", "backbone.features.1"] + \
    [f"backbone.extra.{i}" for i in range(5)] + ["head.regression_head", "head.classification_head", "anchor_generator"]


class Tracker:
    def __init__(self):
        self.running = 0
        self.parts = []

    def reset(self):
        torch.cuda.synchronize(); self.running = 0; torch.cuda.reset_peak_memory_stats()

    def cut(self):
        torch.cuda.synchronize(); p = torch.cuda.max_memory_allocated(); self.running = max(self.running, p)
        torch.cuda.reset_peak_memory_stats(); return p

    def hook(self, model):
        modules = dict(model.named_modules())
        hs = []
        for name in PART_NAMES:
            m = modules.get(name)
            if m is None or isinstance(m, torch.nn.ModuleList):
                continue

            def pre(mod, inp, name=name):
                p = self.cut(); self.parts.append({"part": f"gap:{name}", "peak": mib(p)})
                mod._start = torch.cuda.memory_allocated()

            def post(mod, inp, out, name=name):
                p = self.cut()
                rec = {"part": name, "start": mib(mod._start), "peak": mib(p), "end": mib(torch.cuda.memory_allocated())}
                if name == "transform":
                    rec["images"] = list(out[0].tensors.shape)
                if isinstance(out, torch.Tensor):
                    rec["out"] = list(out.shape)
                self.parts.append(rec)
            hs += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
        return hs


def targets_for(B, H, W, k, classes):
    ts = []
    for _ in range(B):
        xy = torch.rand(k, 2) * torch.tensor([W * 0.6, H * 0.6]); wh = torch.rand(k, 2) * torch.tensor([W * 0.3, H * 0.3]) + 16
        ts.append({"boxes": torch.cat([xy, xy + wh], 1).to(dev), "labels": torch.randint(1, classes, (k,), device=dev)})
    return ts


def run(name, mode, B, H, W, classes=91, amp=False, imagenet_structure=False, k=8, steps=2):
    rec = {"model": name, "mode": mode, "batch": B, "h": H, "w": W, "boxes": k, "num_classes": classes, "amp": amp,
           "imagenet_structure": imagenet_structure}
    t0 = time.time()
    try:
        gc.collect(); torch.cuda.empty_cache()
        model = build(name, classes, imagenet_structure).to(dev)
        rec["params"], rec["trainable"] = counts(model)
        tr = Tracker()
        if mode == "train":
            model.train()
            opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9, weight_decay=1e-4)
            for s in range(steps):
                images = [torch.rand(3, H, W, device=dev) for _ in range(B)]
                targets = targets_for(B, H, W, k, classes)
                last = s == steps - 1
                if last:
                    tr.reset(); rec["step_start"] = mib(torch.cuda.memory_allocated()); hs = tr.hook(model)
                opt.zero_grad()
                with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
                    losses = model(images, targets)
                loss = sum(losses.values())
                if last:
                    tr.parts.append({"part": "tail", "peak": mib(tr.cut())}); rec["after_forward"] = mib(torch.cuda.memory_allocated())
                    for h in hs: h.remove()
                loss.backward()
                if last:
                    rec["backward_peak"] = mib(tr.cut()); rec["after_backward"] = mib(torch.cuda.memory_allocated())
                opt.step()
                if last:
                    rec["step_peak"] = mib(tr.cut())
                del losses, loss, images, targets
            del opt
        else:
            model.eval()
            with torch.no_grad():
                for s in range(steps):
                    images = [torch.rand(3, H, W, device=dev) for _ in range(B)]
                    last = s == steps - 1
                    if last:
                        tr.reset(); rec["step_start"] = mib(torch.cuda.memory_allocated()); hs = tr.hook(model)
                    with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
                        out = model(images)
                    if last:
                        tr.parts.append({"part": "tail", "peak": mib(tr.cut())}); rec["after_forward"] = mib(torch.cuda.memory_allocated())
                        for h in hs: h.remove()
                        rec["detections"] = sum(int(o["boxes"].shape[0]) for o in out)
                    del images, out
        rec["peak"] = mib(tr.running)
        rec["parts"] = tr.parts
        del model
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        rec["error"] = repr(e)[:300]
    rec["wall_s"] = round(time.time() - t0, 2)
    gc.collect(); torch.cuda.empty_cache()
    res["runs"].append(rec)
    print(json.dumps({k: v for k, v in rec.items() if k != "parts"}), file=sys.stderr, flush=True)


pc = {}
for name in ("ssd300_vgg16", "ssdlite320_mobilenet_v3_large"):
    for nc in (91, 21, 2):
        for imagenet_structure in (False, True):
            with torch.device("meta"):
                pc[f"{name}/{nc}" + ("/imagenet-structure" if imagenet_structure else "")] = counts(build(name, nc, imagenet_structure))
res["params"] = pc
print(json.dumps(pc), file=sys.stderr, flush=True)

# SSD300. Calibration: b16 train and eval at 480x640 (91 classes). Validation: the rest.
run("ssd300_vgg16", "train", 16, 480, 640)
run("ssd300_vgg16", "eval", 16, 480, 640)
run("ssd300_vgg16", "train", 8, 300, 300, classes=21)
run("ssd300_vgg16", "train", 24, 720, 1280, classes=2)
run("ssd300_vgg16", "train", 16, 480, 640, amp=True)
run("ssd300_vgg16", "train", 16, 480, 640, imagenet_structure=True)
run("ssd300_vgg16", "eval", 32, 600, 800, classes=21)
# SSDlite320. Calibration: b64 train and b32 eval at 480x640 (91 classes). Validation: the rest.
run("ssdlite320_mobilenet_v3_large", "train", 64, 480, 640)
run("ssdlite320_mobilenet_v3_large", "eval", 32, 480, 640)
run("ssdlite320_mobilenet_v3_large", "train", 32, 320, 320, classes=21)
run("ssdlite320_mobilenet_v3_large", "train", 64, 480, 640, amp=True)
run("ssdlite320_mobilenet_v3_large", "train", 32, 480, 640, imagenet_structure=True)
run("ssdlite320_mobilenet_v3_large", "eval", 128, 480, 640, classes=2)

with open(sys.argv[1], "w") as f:
    json.dump(res, f, indent=1)
