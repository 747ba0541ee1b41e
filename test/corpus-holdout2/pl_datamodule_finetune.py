"""Fine-tune a frozen-backbone image classifier with PyTorch Lightning.

python pl_datamodule_finetune.py --data_dir /data/flowers --backbone resnet50
"""
import argparse
import glob
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset
import pytorch_lightning as pl
from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint


class FolderDataset(Dataset):
    def __init__(self, root, classes, transform):
        self.samples = []
        for idx, cls in enumerate(classes):
            for path in glob.glob(os.path.join(root, cls, "*.jpg")):
                self.samples.append((path, idx))
        self.transform = transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        img = Image.open(path).convert("RGB")
        x = self.transform(img)
        if torch.cuda.is_available():
            x = x.contiguous()
        return x, torch.tensor(label, dtype=torch.long)


class FlowersDataModule(pl.LightningDataModule):
    def __init__(self, data_dir, batch_size=64, num_workers=8):
        super().__init__()
        self.data_dir = data_dir
        self.batch_size = batch_size
        self.num_workers = num_workers
        weights = torchvision.models.ResNet50_Weights.IMAGENET1K_V2
        self.train_tf = torchvision.transforms.Compose([
            torchvision.transforms.RandomResizedCrop(224),
            torchvision.transforms.RandomHorizontalFlip(),
            weights.transforms(),
        ])
        self.eval_tf = weights.transforms()

    def setup(self, stage=None):
        classes = sorted(os.listdir(os.path.join(self.data_dir, "train")))
        self.num_classes = len(classes)
        self.train_ds = FolderDataset(os.path.join(self.data_dir, "train"), classes, self.train_tf)
        self.val_ds = FolderDataset(os.path.join(self.data_dir, "val"), classes, self.eval_tf)

    def train_dataloader(self):
        return DataLoader(self.train_ds, batch_size=self.batch_size, shuffle=True,
                          num_workers=self.num_workers, pin_memory=True, persistent_workers=True)

    def val_dataloader(self):
        return DataLoader(self.val_ds, batch_size=self.batch_size * 2,
                          num_workers=self.num_workers, pin_memory=True)


class TransferModel(pl.LightningModule):
    def __init__(self, num_classes, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        backbone = torchvision.models.resnet50(weights="IMAGENET1K_V2")
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(2048, num_classes)

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y, label_smoothing=0.1)
        self.log("train/loss", loss, on_step=True, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val/loss", F.cross_entropy(logits, y), prog_bar=True)
        self.log("val/acc", (logits.argmax(-1) == y).float().mean(), prog_bar=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, self.parameters()), lr=self.hparams.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return [opt], [sched]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="data/flowers")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args()

    torch.set_float32_matmul_precision("high")
    dm = FlowersDataModule(args.data_dir, batch_size=args.batch_size)
    dm.setup()
    model = TransferModel(num_classes=dm.num_classes)
    trainer = Trainer(
        accelerator="auto",
        devices="auto",
        max_epochs=args.epochs,
        precision="16-mixed",
        callbacks=[EarlyStopping(monitor="val/loss", patience=3), ModelCheckpoint(monitor="val/acc", mode="max")],
    )
    trainer.fit(model, datamodule=dm)
    print("best:", trainer.checkpoint_callback.best_model_path, np.round(trainer.callback_metrics["val/acc"].item(), 4))
