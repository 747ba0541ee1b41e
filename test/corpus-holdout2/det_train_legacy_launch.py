"""Train a RetinaNet detector on COCO.

python -m torch.distributed.launch --nproc_per_node=4 det_train_legacy_launch.py --config configs/retinanet_r50.yaml
"""
import argparse
import math
import time

import torch
import torch.distributed
import torchvision
import yaml
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision.datasets import CocoDetection
import torchvision.transforms.v2 as T


def build_model(cfg):
    return torchvision.models.detection.retinanet_resnet50_fpn_v2(
        weights=None, weights_backbone="IMAGENET1K_V2", num_classes=cfg["num_classes"])


def collate_fn(batch):
    return tuple(zip(*batch))


def evaluate(model, loader, device):
    model.eval()
    n_dets = 0
    with torch.no_grad():
        for images, _ in loader:
            images = [img.to(device) for img in images]
            outputs = model(images)
            n_dets += sum(len(o["boxes"]) for o in outputs)
    model.train()
    return n_dets


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/retinanet_r50.yaml")
    parser.add_argument("--pretrained", default="")
    parser.add_argument("--local-rank", "--local_rank", type=int, default=0, dest="local_rank")
    args = parser.parse_args()
    cfg = yaml.safe_load(open(args.config))

    torch.distributed.init_process_group(backend="nccl")
    world_size = torch.distributed.get_world_size()
    device = torch.device("cuda")  # expect: OOM111

    model = build_model(cfg).to(device)
    if args.pretrained:
        model.load_state_dict(torch.load(args.pretrained)["state_dict"], strict=False)  # expect: OOM110
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                      output_device=args.local_rank)

    tf = T.Compose([T.ToImage(), T.RandomHorizontalFlip(), T.ToDtype(torch.float32, scale=True)])
    train_set = torchvision.datasets.wrap_dataset_for_transforms_v2(
        CocoDetection(cfg["train_images"], cfg["train_ann"], transforms=tf))
    val_set = torchvision.datasets.wrap_dataset_for_transforms_v2(
        CocoDetection(cfg["val_images"], cfg["val_ann"], transforms=tf))
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=cfg["batch_size"], sampler=sampler,
                        num_workers=cfg.get("workers", 4), collate_fn=collate_fn)
    val_loader = DataLoader(val_set, batch_size=4, collate_fn=collate_fn)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=cfg["lr"] * world_size, momentum=0.9, weight_decay=1e-4)
    warmup = cfg.get("warmup_iters", 1000)

    it = 0
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        t0 = time.time()
        for images, targets in loader:
            images = [img.to(device) for img in images]
            targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
            loss_dict = model(images, targets)
            losses = sum(loss for loss in loss_dict.values())
            if not math.isfinite(losses.item()):
                raise SystemExit(f"loss is {losses.item()}, stopping")
            if it < warmup:
                for g in optimizer.param_groups:
                    g["lr"] = cfg["lr"] * world_size * (it + 1) / warmup
            optimizer.zero_grad()
            losses.backward()
            optimizer.step()
            it += 1
        if args.local_rank == 0:
            print(f"epoch {epoch} done in {time.time() - t0:.0f}s, dets on val: {evaluate(model.module, val_loader, device)}")
            torch.save({"state_dict": model.module.state_dict()}, f"retinanet_ep{epoch}.pth")


if __name__ == "__main__":
    main()
