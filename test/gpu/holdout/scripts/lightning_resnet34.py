import lightning as L
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, TensorDataset


class LitClassifier(L.LightningModule):
    def __init__(self, num_classes: int = 100, lr: float = 0.1, momentum: float = 0.9, max_steps: int = 6):
        super().__init__()
        self.save_hyperparameters()
        self.net = torchvision.models.resnet34(weights=None, num_classes=num_classes)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        acc = (logits.argmax(1) == y).float().mean()
        self.log("val_acc", acc)

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=self.hparams.momentum,
                              weight_decay=5e-4)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.hparams.max_steps)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def loaders(batch_size=128, image_size=224, num_classes=100, n_train=6, n_val=2):
    def ds(n):
        return TensorDataset(torch.randn(n * batch_size, 3, image_size, image_size),
                             torch.randint(0, num_classes, (n * batch_size,)))
    return (DataLoader(ds(n_train), batch_size=batch_size, shuffle=True, num_workers=0),
            DataLoader(ds(n_val), batch_size=batch_size, num_workers=0))


if __name__ == "__main__":
    L.seed_everything(0)
    train_dl, val_dl = loaders()
    model = LitClassifier()
    trainer = L.Trainer(
        accelerator="gpu",
        devices=1,
        precision="16-mixed",
        max_steps=6,
        max_epochs=1,
        limit_val_batches=2,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir="/tmp/holdout-lightning-resnet34",
    )
    trainer.fit(model, train_dataloaders=train_dl, val_dataloaders=val_dl)
