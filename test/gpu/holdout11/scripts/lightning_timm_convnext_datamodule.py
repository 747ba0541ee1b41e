"""Plant-disease classifier: timm ConvNeXt-Nano in a LightningModule with a LightningDataModule,
16-mixed precision and accumulate_grad_batches=4."""
import lightning as L
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class LeafImages(Dataset):
    def __init__(self, n, img_size, num_classes):
        self.n, self.img_size, self.num_classes = n, img_size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.img_size, self.img_size), i % self.num_classes


class LeafDataModule(L.LightningDataModule):
    def __init__(self, batch_size=64, img_size=224, num_classes=38, num_workers=4):
        super().__init__()
        self.save_hyperparameters()

    def setup(self, stage=None):
        h = self.hparams
        self.train_ds = LeafImages(h.batch_size * 12, h.img_size, h.num_classes)
        self.val_ds = LeafImages(h.batch_size * 2, h.img_size, h.num_classes)

    def train_dataloader(self):
        return DataLoader(self.train_ds, batch_size=self.hparams.batch_size, shuffle=True,
                          num_workers=self.hparams.num_workers, drop_last=True)

    def val_dataloader(self):
        return DataLoader(self.val_ds, batch_size=self.hparams.batch_size, num_workers=self.hparams.num_workers)


class LeafClassifier(L.LightningModule):
    def __init__(self, model_name="convnext_nano", num_classes=38, lr=1e-3, weight_decay=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.model = timm.create_model(model_name, pretrained=False, num_classes=num_classes, drop_path_rate=0.1)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y, label_smoothing=0.1)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log_dict({"val_loss": F.cross_entropy(logits, y), "val_acc": (logits.argmax(1) == y).float().mean()})

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


if __name__ == "__main__":
    L.seed_everything(42)
    dm = LeafDataModule(batch_size=64, img_size=224, num_classes=38)
    model = LeafClassifier("convnext_nano", num_classes=38)
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="16-mixed", accumulate_grad_batches=4,
                        max_steps=3, limit_val_batches=2, num_sanity_val_steps=0, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False)
    trainer.fit(model, datamodule=dm)
