"""ViT-S/16 on Food-101 as a LightningModule. Epoch-level metrics are computed by hand on purpose."""
import os

import lightning as L
import timm
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import WandbLogger
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class ViTClassifier(L.LightningModule):
    def __init__(self, num_classes=101, lr=1e-3, wd=0.05, warmup_epochs=5, mixup_alpha=0.2):
        super().__init__()
        self.save_hyperparameters()
        self.model = timm.create_model("vit_small_patch16_224", pretrained=True, num_classes=num_classes,
                                       drop_path_rate=0.1)
        self.train_losses = []
        self.val_outputs = []

    def forward(self, x):
        return self.model(x)

    def _mixup(self, x, y):
        lam = torch.distributions.Beta(self.hparams.mixup_alpha, self.hparams.mixup_alpha).sample().item()
        perm = torch.randperm(x.size(0), device=x.device)
        return lam * x + (1 - lam) * x[perm], y, y[perm], lam

    def training_step(self, batch, batch_idx):
        x, y = batch
        x, ya, yb, lam = self._mixup(x, y)
        logits = self(x)
        loss = lam * F.cross_entropy(logits, ya) + (1 - lam) * F.cross_entropy(logits, yb)
        self.train_losses.append(loss)  # expect: OOM101
        self.log("train/loss_step", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        epoch_loss = torch.stack(self.train_losses).mean()
        self.log("train/loss_epoch", epoch_loss)
        self.train_losses.clear()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.val_outputs.append({"loss": F.cross_entropy(logits, y, reduction="sum"),
                                 "correct": (logits.argmax(1) == y).sum(), "n": y.numel()})

    def on_validation_epoch_end(self):
        n = sum(o["n"] for o in self.val_outputs)
        loss = torch.stack([o["loss"] for o in self.val_outputs]).sum() / n
        acc = torch.stack([o["correct"] for o in self.val_outputs]).sum() / n
        self.log_dict({"val/loss": loss, "val/acc": acc}, prog_bar=True, sync_dist=True)
        self.val_outputs.clear()

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test/acc", (self(x).argmax(1) == y).float().mean())

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.wd)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.hparams.lr,
                                                    total_steps=self.trainer.estimated_stepping_batches,
                                                    pct_start=self.hparams.warmup_epochs / self.trainer.max_epochs)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def loaders(root, bs):
    norm = transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.TrivialAugmentWide(), transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    tr = datasets.Food101(root, split="train", transform=train_tf, download=True)
    te = datasets.Food101(root, split="test", transform=test_tf, download=True)
    return (DataLoader(tr, bs, shuffle=True, num_workers=12, pin_memory=True, drop_last=True),
            DataLoader(te, bs * 2, num_workers=12, pin_memory=True))


if __name__ == "__main__":
    os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"  # expect: OOM105
    train_dl, test_dl = loaders("data", 128)
    model = ViTClassifier()
    trainer = L.Trainer(max_epochs=30, accelerator="gpu", devices=2, strategy="ddp", precision="bf16-mixed",
                        logger=WandbLogger(project="food101-vit"), gradient_clip_val=1.0,
                        callbacks=[ModelCheckpoint(monitor="val/acc", mode="max"), LearningRateMonitor()])
    trainer.fit(model, train_dl, test_dl)
    trainer.test(model, test_dl, ckpt_path="best")
