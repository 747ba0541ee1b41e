#!/usr/bin/env python3
""" ImageNet fine-tuning with timm models, train_one_epoch / validate structure.

Hacked together from our older training code; AMP via torch.amp, EMA optional.
"""
import argparse
import logging
import os
import time
from collections import OrderedDict

import torch
import torch.nn as nn
import timm
from timm.data import create_dataset, create_loader, resolve_data_config, Mixup
from timm.loss import SoftTargetCrossEntropy
from timm.utils import AverageMeter, ModelEmaV2, accuracy

os.environ.update({  # expect: OOM105
    "CUDA_VISIBLE_DEVICES": "0,1",
    "OMP_NUM_THREADS": "8",
})

_logger = logging.getLogger("train")

parser = argparse.ArgumentParser()
parser.add_argument("data_dir")
parser.add_argument("--model", default="resnet50")
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("-b", "--batch-size", type=int, default=128)
parser.add_argument("--lr", type=float, default=5e-4)
parser.add_argument("--grad-accum", type=int, default=1)
parser.add_argument("--log-interval", type=int, default=50)
parser.add_argument("--model-ema", action="store_true")
parser.add_argument("--mixup", type=float, default=0.0)
parser.add_argument("--clip-grad", type=float, default=None)


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, lr_scheduler=None,
                    amp_scaler=None, model_ema=None, mixup_fn=None):
    batch_time_m = AverageMeter()
    data_time_m = AverageMeter()
    losses_m = AverageMeter()

    model.train()
    accum_steps = args.grad_accum
    num_batches_per_epoch = len(loader)
    num_updates = epoch * (num_batches_per_epoch // accum_steps)
    end = time.time()
    optimizer.zero_grad()
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == num_batches_per_epoch - 1
        need_update = last_batch or (batch_idx + 1) % accum_steps == 0
        data_time_m.update(time.time() - end)

        input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)
        if mixup_fn is not None:
            input, target = mixup_fn(input, target)

        with torch.autocast("cuda", dtype=torch.float16):
            output = model(input)
            loss = loss_fn(output, target)
        loss = loss / accum_steps

        amp_scaler.scale(loss).backward()
        if need_update:
            if args.clip_grad is not None:
                amp_scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            amp_scaler.step(optimizer)
            amp_scaler.update()
            optimizer.zero_grad()
            num_updates += 1
            if model_ema is not None:
                model_ema.update(model)

        losses_m.update(loss.item() * accum_steps, input.size(0))
        batch_time_m.update(time.time() - end)

        if batch_idx % args.log_interval == 0:
            lrl = [param_group["lr"] for param_group in optimizer.param_groups]
            _logger.info(
                f"Train: {epoch} [{batch_idx:>4d}/{len(loader)}] "
                f"Loss: {losses_m.val:#.3g} ({losses_m.avg:#.3g}) LR: {lrl[0]:.3e}"
            )
            # try to keep fragmentation down on the 16GB cards
            torch.cuda.empty_cache()  # expect: OOM106

        if lr_scheduler is not None and need_update:
            lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)
        end = time.time()

    return OrderedDict([("loss", losses_m.avg)])


def validate(model, loader, loss_fn, args, log_suffix=""):
    batch_time_m = AverageMeter()
    losses_m = AverageMeter()
    top1_m = AverageMeter()
    top5_m = AverageMeter()

    model.eval()
    end = time.time()
    last_idx = len(loader) - 1
    with torch.no_grad():
        for batch_idx, (input, target) in enumerate(loader):
            input = input.cuda()
            target = target.cuda()
            with torch.autocast("cuda", dtype=torch.float16):
                output = model(input)
                if isinstance(output, (tuple, list)):
                    output = output[0]
                loss = loss_fn(output, target)
            acc1, acc5 = accuracy(output, target, topk=(1, 5))

            losses_m.update(loss.item(), input.size(0))
            top1_m.update(acc1.item(), output.size(0))
            top5_m.update(acc5.item(), output.size(0))

            batch_time_m.update(time.time() - end)
            end = time.time()
            if batch_idx == last_idx or batch_idx % args.log_interval == 0:
                _logger.info(f"Test{log_suffix}: [{batch_idx:>4d}/{last_idx}] "
                             f"Acc@1: {top1_m.avg:>7.3f} Acc@5: {top5_m.avg:>7.3f}")

    return OrderedDict([("loss", losses_m.avg), ("top1", top1_m.avg), ("top5", top5_m.avg)])


def main():
    logging.basicConfig(level=logging.INFO)
    args = parser.parse_args()

    model = timm.create_model(args.model, pretrained=True, num_classes=1000)
    model.cuda()
    data_config = resolve_data_config(vars(args), model=model)

    dataset_train = create_dataset("", root=args.data_dir, split="train", is_training=True)
    dataset_eval = create_dataset("", root=args.data_dir, split="validation", is_training=False)
    loader_train = create_loader(dataset_train, input_size=data_config["input_size"],
                                 batch_size=args.batch_size, is_training=True, num_workers=8)
    loader_eval = create_loader(dataset_eval, input_size=data_config["input_size"],
                                batch_size=args.batch_size * 2, is_training=False, num_workers=8)

    mixup_fn = Mixup(mixup_alpha=args.mixup, num_classes=1000) if args.mixup > 0 else None
    train_loss_fn = SoftTargetCrossEntropy().cuda() if mixup_fn else nn.CrossEntropyLoss().cuda()
    validate_loss_fn = nn.CrossEntropyLoss().cuda()

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    lr_scheduler = timm.scheduler.CosineLRScheduler(optimizer, t_initial=args.epochs)
    amp_scaler = torch.amp.GradScaler("cuda")
    model_ema = ModelEmaV2(model, decay=0.9998) if args.model_ema else None

    best_metric = None
    for epoch in range(args.epochs):
        train_metrics = train_one_epoch(epoch, model, loader_train, optimizer, train_loss_fn, args,
                                        lr_scheduler=lr_scheduler, amp_scaler=amp_scaler,
                                        model_ema=model_ema, mixup_fn=mixup_fn)
        eval_metrics = validate(model, loader_eval, validate_loss_fn, args)
        if model_ema is not None:
            ema_metrics = validate(model_ema.module, loader_eval, validate_loss_fn, args, log_suffix=" (EMA)")
            eval_metrics = ema_metrics
        lr_scheduler.step(epoch + 1, eval_metrics["top1"])
        if best_metric is None or eval_metrics["top1"] > best_metric:
            best_metric = eval_metrics["top1"]
            torch.save(model.state_dict(), f"{args.model}_best.pth")
        _logger.info(f"epoch {epoch}: train {train_metrics['loss']:.4f} top1 {eval_metrics['top1']:.2f}")


if __name__ == "__main__":
    main()
