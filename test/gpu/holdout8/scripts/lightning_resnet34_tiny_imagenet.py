"""Tiny-ImageNet (200 classes, 64x64) with a ResNet-34 whose stem is adapted to small images.

Lightning handles fp16 mixed precision and gradient accumulation; the data module yields random tensors.
"""
try:
    import lightning as L
except ImportError:                      # older installs only have the pytorch_lightning package
    import pytorch_lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import resnet34

NUM_CLASSES = 200
IMG = 64


class TinyImageNetStub(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, IMG, IMG), torch.randint(0, NUM_CLASSES, ()).item()


class TinyImageNetData(L.LightningDataModule):
    def __init__(self, batch_size=256, num_workers=4, train_size=4096):
        super().__init__()
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.train_size = train_size

    def setup(self, stage=None):
        self.train_set = TinyImageNetStub(self.train_size)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True,
                          num_workers=self.num_workers, drop_last=True, persistent_workers=False)


class LitResNet(L.LightningModule):
    def __init__(self, lr=0.2, momentum=0.9, weight_decay=5e-4, total_steps=4):
        super().__init__()
        self.save_hyperparameters()
        net = resnet34(weights=None, num_classes=NUM_CLASSES)
        # 64x64 inputs: 3x3 stride-1 stem and no max-pool, so layer1 runs at 64x64
        net.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
        net.maxpool = nn.Identity()
        self.net = net

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        acc = (logits.argmax(1) == y).float().mean()
        self.log("train_loss", loss, prog_bar=True)
        self.log("train_acc", acc)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=self.hparams.momentum,
                              weight_decay=self.hparams.weight_decay, nesterov=True)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.hparams.lr,
                                                    total_steps=self.hparams.total_steps + 1)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


if __name__ == "__main__":
    L.seed_everything(0)
    max_steps = 4
    dm = TinyImageNetData(batch_size=256, num_workers=4)
    model = LitResNet(total_steps=max_steps)
    trainer = L.Trainer(
        accelerator="gpu",
        devices=1,
        precision="16-mixed",
        accumulate_grad_batches=2,
        max_steps=max_steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=True,
    )
    trainer.fit(model, datamodule=dm)
    print(f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
