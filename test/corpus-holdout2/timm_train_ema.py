#!/usr/bin/env python3
""" ImageNet-style training with timm models, mixup and a model EMA. """
import argparse
import time
from copy import deepcopy

import torch
import torch.nn as nn
import timm
from timm.data import Mixup, create_dataset, create_loader, resolve_data_config
from timm.loss import SoftTargetCrossEntropy
from timm.utils import AverageMeter

parser = argparse.ArgumentParser(description="timm training")
parser.add_argument("--data-dir", default="/data/imagenet", dest="data_dir")
parser.add_argument("--model", default="vit_small_patch16_224", type=str)
parser.add_argument("--num-classes", type=int, default=1000, dest="num_classes")
parser.add_argument("-b", "--batch-size", type=int, default=128, dest="batch_size")
parser.add_argument("--epochs", type=int, default=300)
parser.add_argument("--lr", type=float, default=5e-4)
parser.add_argument("--weight-decay", type=float, default=0.05, dest="weight_decay")
parser.add_argument("--model-ema-decay", type=float, default=0.9998, dest="model_ema_decay")
parser.add_argument("--mixup", type=float, default=0.8)
parser.add_argument("--cutmix", type=float, default=1.0)
parser.add_argument("-j", "--workers", type=int, default=10)


class ModelEma(nn.Module):
    """Keeps a moving average of everything in the model state_dict (parameters and buffers)."""

    def __init__(self, model, decay=0.9999):
        super().__init__()
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        for p in self.module.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            ema_v.copy_(ema_v * self.decay + (1. - self.decay) * model_v)


def validate(model, loader):
    model.eval()
    all_preds, all_targets = [], []
    with torch.no_grad():
        for input, target in loader:
            input = input.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                output = model(input)
            all_preds.append(output.argmax(dim=1).cpu())
            all_targets.append(target.cpu())
    preds = torch.cat(all_preds)
    targets = torch.cat(all_targets)
    return {"top1": (preds == targets).float().mean().item() * 100}


def main():
    args = parser.parse_args()
    model = timm.create_model(args.model, pretrained=False, num_classes=args.num_classes, drop_path_rate=0.1)
    model = model.cuda()
    unwrapped = model.module if isinstance(model, nn.DataParallel) else model
    data_config = resolve_data_config(vars(args), model=unwrapped)

    model_ema = ModelEma(model, decay=args.model_ema_decay)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    dataset_train = create_dataset("", root=args.data_dir, split="train", is_training=True)
    dataset_eval = create_dataset("", root=args.data_dir, split="validation")
    loader_train = create_loader(dataset_train, input_size=data_config["input_size"], batch_size=args.batch_size,
                                 is_training=True, num_workers=args.workers)
    loader_eval = create_loader(dataset_eval, input_size=data_config["input_size"], batch_size=args.batch_size * 2,
                                is_training=False, num_workers=args.workers)

    mixup_fn = Mixup(mixup_alpha=args.mixup, cutmix_alpha=args.cutmix, label_smoothing=0.1,
                     num_classes=args.num_classes)
    train_loss_fn = SoftTargetCrossEntropy().cuda()

    for epoch in range(args.epochs):
        model.train()
        losses_m = AverageMeter()
        end = time.time()
        for batch_idx, (input, target) in enumerate(loader_train):
            input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)
            input, target = mixup_fn(input, target)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                output = model(input)
                loss = train_loss_fn(output, target)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            model_ema.update(model)
            losses_m.update(loss.item(), input.size(0))
            if batch_idx % 100 == 0:
                print(f"Train: {epoch} [{batch_idx}/{len(loader_train)}] loss {losses_m.avg:.4f} "
                      f"({time.time() - end:.1f}s)")
        scheduler.step()
        # release cached blocks once per epoch before the eval pass allocates its own buffers
        torch.cuda.empty_cache()

        eval_metrics = validate(model, loader_eval)
        ema_metrics = validate(model_ema.module, loader_eval)
        print(f"epoch {epoch}: top1 {eval_metrics['top1']:.2f} ema top1 {ema_metrics['top1']:.2f}")


if __name__ == "__main__":
    main()
