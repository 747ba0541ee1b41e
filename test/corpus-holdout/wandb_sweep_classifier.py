"""W&B sweep agent: ConvNeXt-T on a 40-class plant-disease set. 🌿

    wandb sweep sweep.yaml && wandb agent <entity>/<project>/<sweep_id>
"""
import os

import torch
import torch.nn as nn
import timm
import wandb
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

DEFAULTS = dict(lr=5e-4, wd=0.05, bs=64, epochs=15, label_smoothing=0.1, drop_path=0.1, gpu=0, amp=True)


def make_loaders(bs):
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    tr = datasets.ImageFolder("data/plants/train", transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), norm]))
    va = datasets.ImageFolder("data/plants/val", transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm]))
    return (DataLoader(tr, bs, shuffle=True, num_workers=8, pin_memory=True, drop_last=True),
            DataLoader(va, bs * 2, num_workers=8, pin_memory=True), tr.classes)


def train_one_epoch(model, loader, criterion, optimizer, scaler, epoch, amp, loss_history):
    model.train()
    for i, (x, y) in enumerate(loader):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # expect: OOM103
        scaler.update()
        loss_history += [loss]  # expect: OOM101
        if i % 20 == 0:
            wandb.log({"train/loss": loss.item(), "train/lr": optimizer.param_groups[0]["lr"],
                       "epoch": epoch + i / len(loader)})


@torch.no_grad()
def validate(model, loader, criterion, classes):
    model.eval()
    loss_sum, preds, targets = 0.0, [], []
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        logits = model(x)
        loss_sum += criterion(logits, y) * y.numel()
        preds.append(logits.argmax(1).cpu())
        targets.append(y.cpu())
    preds, targets = torch.cat(preds), torch.cat(targets)
    n = targets.numel()
    wandb.log({"val/confusion": wandb.plot.confusion_matrix(y_true=targets.tolist(), preds=preds.tolist(),
                                                            class_names=classes)})
    return (loss_sum / n).item(), (preds == targets).float().mean().item()


def run():
    with wandb.init(config=DEFAULTS) as r:
        cfg = r.config
        os.environ["CUDA_VISIBLE_DEVICES"] = str(cfg.gpu)
        train_dl, val_dl, classes = make_loaders(cfg.bs)
        model = timm.create_model("convnext_tiny", pretrained=True, num_classes=len(classes),
                                  drop_path_rate=cfg.drop_path).cuda()
        criterion = nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)
        optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.wd)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, cfg.epochs)
        scaler = torch.amp.GradScaler("cuda", enabled=cfg.amp)
        best, loss_history = 0.0, []
        for epoch in range(cfg.epochs):
            train_one_epoch(model, train_dl, criterion, optimizer, scaler, epoch, cfg.amp, loss_history)
            losses = torch.stack(loss_history[-len(train_dl):]).detach().float().cpu().numpy()
            val_loss, val_acc = validate(model, val_dl, criterion, classes)
            scheduler.step()
            wandb.log({"train/loss_hist": wandb.Histogram(losses), "val/loss": val_loss, "val/acc": val_acc,
                       "epoch": epoch + 1})
            if val_acc > best:
                best = val_acc
                wandb.run.summary["best_val_acc"] = best
                torch.save(model.state_dict(), os.path.join(wandb.run.dir, "best.pt"))


if __name__ == "__main__":
    run()
