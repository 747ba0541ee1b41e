"""Fine-tuning with a frozen part, on the H200 (no weights are downloaded there: the pretrained structure is built
by hand). Classifiers: a torchvision model with a new head, frozen in the shapes transfer-learning scripts use
(every parameter then a new head; requires_grad_(False) on named submodules; nothing frozen but an optimizer given
only the head's parameters), fp32 and bf16 autocast. Detectors: what `weights=...` builds (FrozenBatchNorm2d in the
ResNet-50 backbone, conv1 and layer1 frozen: trainable_backbone_layers=3), with the tutorial's new box predictor,
and with the whole backbone frozen. Also the detectors the first probe did not reach: keypoint R-CNN (labels within
its 2 classes), SSD300, SSDlite320, FCOS and RetinaNet v2, in training and in no-grad evaluation.

Each row runs 3 steps (zero_grad, forward, backward, step; or a no-grad forward) and records each step's peak
(max_memory_allocated, reset at the step's start), the memory at the step's start, and the parameter counts.
Run: python probe_frozen.py OUT.json
"""
import gc, json, sys, time
import torch, torch.nn as nn, torch.nn.functional as F, torchvision
from torchvision.models import detection as D
from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor
from torchvision.ops import misc as misc_nn_ops
from torchvision.ops.feature_pyramid_network import LastLevelP6P7

dev = "cuda"
MIB = 2 ** 20
res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "torchvision": torchvision.__version__, "runs": []}
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)


def counts(model):
    return sum(p.numel() for p in model.parameters()), sum(p.numel() for p in model.parameters() if p.requires_grad)


def record(rec, fn):
    t0 = time.time()
    try:
        gc.collect(); torch.cuda.empty_cache()
        fn(rec)
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        rec["error"] = repr(e)[:300]
    rec["wall_s"] = round(time.time() - t0, 2)
    gc.collect(); torch.cuda.empty_cache()
    res["runs"].append(rec)
    print(json.dumps(rec), file=sys.stderr, flush=True)


def classifier(name, mode, batch=64, amp=False, head=None, freeze=(), freeze_all=False, opt_head_only=False):
    rec = {"kind": "classifier", "model": name, "mode": mode, "batch": batch, "amp": amp, "freeze": list(freeze),
           "freeze_all": freeze_all, "opt_head_only": opt_head_only, "head": head}

    def run(rec):
        model = getattr(torchvision.models, name)(num_classes=1000)
        if freeze_all:
            for p in model.parameters():
                p.requires_grad = False
        # The new head: a Linear to 10 classes at the path `head` names (its last element is the attribute).
        parent, attr = model, head.split(".")
        for part in attr[:-1]:
            parent = parent[int(part)] if part.isdigit() else getattr(parent, part)
        old = parent[int(attr[-1])] if attr[-1].isdigit() else getattr(parent, attr[-1])
        new = nn.Linear(old.in_features, 10)
        if attr[-1].isdigit(): parent[int(attr[-1])] = new
        else: setattr(parent, attr[-1], new)
        for sub in freeze:
            getattr(model, sub).requires_grad_(False)
        model = model.to(dev)
        rec["params"], rec["trainable"] = counts(model)
        params = new.parameters() if opt_head_only else [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-3)
        rec["step_peaks"], rec["step_starts"] = [], []
        for _ in range(3):
            x = torch.randn(batch, 3, 224, 224, device=dev); y = torch.randint(0, 10, (batch,), device=dev)
            torch.cuda.synchronize(); rec["step_starts"].append(round(torch.cuda.memory_allocated() / MIB, 1))
            torch.cuda.reset_peak_memory_stats()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            torch.cuda.synchronize(); rec["step_peaks"].append(round(torch.cuda.max_memory_allocated() / MIB, 1))
            del loss, x, y
        del model, opt
    record(rec, run)


def targets_for(B, H, W, k, kind, classes):
    ts = []
    for _ in range(B):
        xy = torch.rand(k, 2) * torch.tensor([W * 0.6, H * 0.6]); wh = torch.rand(k, 2) * torch.tensor([W * 0.3, H * 0.3]) + 16
        t = {"boxes": torch.cat([xy, xy + wh], 1).to(dev), "labels": torch.randint(1, classes, (k,), device=dev)}
        if kind == "mask":
            t["masks"] = (torch.rand(k, H, W, device=dev) > 0.5).to(torch.uint8)
        if kind == "keypoint":
            kp = torch.rand(k, 17, 3, device=dev); kp[..., 0] *= W; kp[..., 1] *= H; kp[..., 2] = 1
            t["keypoints"] = kp
        ts.append(t)
    return ts


def pretrained_structure(arch, classes, trainable_layers):
    """What `weights=...` builds, with random weights: FrozenBatchNorm2d, the first 5 - trainable_layers stages frozen."""
    backbone = torchvision.models.resnet50(weights=None, norm_layer=misc_nn_ops.FrozenBatchNorm2d)
    if arch == "retinanet":
        backbone = _resnet_fpn_extractor(backbone, trainable_layers, returned_layers=[2, 3, 4], extra_blocks=LastLevelP6P7(256, 256))
        return D.RetinaNet(backbone, num_classes=classes)
    backbone = _resnet_fpn_extractor(backbone, trainable_layers)
    return (D.MaskRCNN if arch == "maskrcnn" else D.FasterRCNN)(backbone, num_classes=classes)


def detector(label, build, mode, B, H, W, k=8, kind="box", classes=91, predictor=None):
    rec = {"kind": "detector", "model": label, "mode": mode, "batch": B, "h": H, "w": W, "boxes": k, "num_classes": classes}

    def run(rec):
        model = build()
        if predictor:
            model.roi_heads.box_predictor = FastRCNNPredictor(1024, predictor)
            rec["predictor_classes"] = predictor
        model = model.to(dev)
        rec["params"], rec["trainable"] = counts(model)
        n = predictor or classes
        rec["step_peaks"], rec["step_starts"] = [], []
        if mode == "train":
            model.train()
            opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9, weight_decay=1e-4)
            for _ in range(3):
                images = [torch.rand(3, H, W, device=dev) for _ in range(B)]
                targets = targets_for(B, H, W, k, kind, n)
                torch.cuda.synchronize(); rec["step_starts"].append(round(torch.cuda.memory_allocated() / MIB, 1))
                torch.cuda.reset_peak_memory_stats()
                opt.zero_grad()
                loss = sum(model(images, targets).values())
                loss.backward()
                opt.step()
                torch.cuda.synchronize(); rec["step_peaks"].append(round(torch.cuda.max_memory_allocated() / MIB, 1))
                del loss, images, targets
            del opt
        else:
            model.eval()
            with torch.no_grad():
                for _ in range(3):
                    images = [torch.rand(3, H, W, device=dev) for _ in range(B)]
                    torch.cuda.synchronize(); rec["step_starts"].append(round(torch.cuda.memory_allocated() / MIB, 1))
                    torch.cuda.reset_peak_memory_stats()
                    out = model(images)
                    torch.cuda.synchronize(); rec["step_peaks"].append(round(torch.cuda.max_memory_allocated() / MIB, 1))
                    del images
                del out
        del model
    record(rec, run)


def random_init(name, **kw):
    return lambda: getattr(D, name)(weights=None, weights_backbone=None, **kw)


# Parameter counts of the detectors not modelled yet, as built without weights, on the meta device.
pc = {}
for name in ["keypointrcnn_resnet50_fpn", "fcos_resnet50_fpn", "retinanet_resnet50_fpn_v2", "ssd300_vgg16", "ssdlite320_mobilenet_v3_large"]:
    for nc in (91, 21, 2):
        try:
            with torch.device("meta"):
                m = getattr(D, name)(weights=None, weights_backbone=None, num_classes=nc)
            pc[f"{name}/{nc}"] = counts(m)
        except Exception as e:  # noqa: BLE001
            pc[f"{name}/{nc}"] = repr(e)[:200]
for arch in ("fasterrcnn", "maskrcnn", "retinanet"):
    for tl in (3, 0):
        with torch.device("meta"):
            pc[f"{arch}/pretrained-structure/tl{tl}"] = counts(pretrained_structure(arch, 91, tl))
res["params"] = pc
print(json.dumps(pc), file=sys.stderr, flush=True)

# Classifiers: ResNet-50 b64 at 224, AdamW.
classifier("resnet50", "train", head="fc")
classifier("resnet50", "train", head="fc", freeze_all=True)
classifier("resnet50", "train", head="fc", freeze_all=True, amp=True)
classifier("resnet50", "train", head="fc", freeze=("conv1", "bn1", "layer1", "layer2"))
classifier("resnet50", "train", head="fc", freeze=("conv1", "bn1", "layer1", "layer2", "layer3"))
classifier("resnet50", "train", head="fc", opt_head_only=True)
classifier("resnet18", "train", batch=128, head="fc", freeze=("conv1", "bn1", "layer1", "layer2", "layer3"))
classifier("efficientnet_b0", "train", head="classifier.1", freeze=("features",))
classifier("vit_b_16", "train", batch=32, head="heads.head", freeze_all=True)
classifier("convnext_tiny", "train", head="classifier.2", freeze_all=True)
classifier("mobilenet_v3_large", "train", batch=128, head="classifier.3", freeze_all=True)

# Detectors with the pretrained structure (FrozenBatchNorm2d, conv1 + layer1 frozen) at 480x640 and 800x800.
for arch, kind in (("fasterrcnn", "box"), ("maskrcnn", "mask"), ("retinanet", "box")):
    detector(f"{arch}/pretrained-structure/tl3", lambda arch=arch: pretrained_structure(arch, 91, 3), "train", 4, 480, 640, kind=kind)
detector("fasterrcnn/pretrained-structure/tl3", lambda: pretrained_structure("fasterrcnn", 91, 3), "train", 2, 800, 800)
detector("fasterrcnn/pretrained-structure/tl3", lambda: pretrained_structure("fasterrcnn", 91, 3), "train", 4, 480, 640, predictor=2)
detector("fasterrcnn/pretrained-structure/tl0", lambda: pretrained_structure("fasterrcnn", 91, 0), "train", 4, 480, 640)
detector("fasterrcnn/pretrained-structure/tl3", lambda: pretrained_structure("fasterrcnn", 91, 3), "eval", 8, 600, 900)
# The detectors the first probe did not reach.
detector("keypointrcnn_resnet50_fpn", random_init("keypointrcnn_resnet50_fpn", num_classes=2), "train", 4, 480, 640, kind="keypoint", classes=2)
detector("keypointrcnn_resnet50_fpn", random_init("keypointrcnn_resnet50_fpn", num_classes=2), "eval", 4, 480, 640, classes=2)
for name, B_train, B_eval in (("fcos_resnet50_fpn", 4, 8), ("retinanet_resnet50_fpn_v2", 4, 8), ("ssd300_vgg16", 32, 64), ("ssdlite320_mobilenet_v3_large", 32, 64)):
    detector(name, random_init(name, num_classes=91), "train", B_train, 480, 640)
    detector(name, random_init(name, num_classes=91), "eval", B_eval, 480, 640)

with open(sys.argv[1], "w") as f:
    json.dump(res, f, indent=1)
