"""CIFAR-10 ResNet-18 classifier as a LightningModule."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import pytorch_lightning as pl
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint
from torch.utils.data import DataLoader
from torchmetrics.classification import MulticlassAccuracy
from torchvision import transforms


def create_model():
    model = torchvision.models.resnet18(weights=None, num_classes=10)
    model.conv1 = nn.Conv2d(3, 64, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
    model.maxpool = nn.Identity()
    return model


class LitResnet(pl.LightningModule):
    def __init__(self, lr=0.05, batch_size=256):
        super().__init__()
        self.save_hyperparameters()
        self.model = create_model()
        self.val_acc = MulticlassAccuracy(num_classes=10)
        self.train_losses = []
        self.validation_step_outputs = []
        self.test_step_outputs = []

    def forward(self, x):
        out = self.model(x)
        return F.log_softmax(out, dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        self.log("train_loss", loss, prog_bar=True)
        # kept for the end-of-epoch histogram
        self.train_losses.append(loss)  # expect: OOM101
        return loss

    def on_train_epoch_end(self):
        epoch_mean = torch.stack(self.train_losses).mean()
        self.log("train_loss_epoch", epoch_mean)
        self.train_losses.clear()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        preds = torch.argmax(logits, dim=1)
        self.val_acc.update(preds, y)
        self.validation_step_outputs.append(loss)
        self.log("val_loss", loss, prog_bar=True)

    def on_validation_epoch_end(self):
        avg = torch.stack(self.validation_step_outputs).mean()
        self.log("val_loss_epoch", avg)
        self.log("val_acc", self.val_acc.compute(), prog_bar=True)
        self.val_acc.reset()
        self.validation_step_outputs.clear()

    def test_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.test_step_outputs.append(logits)

    def on_test_epoch_end(self):
        all_logits = torch.cat(self.test_step_outputs)
        self.log("test_mean_max_logprob", all_logits.max(dim=1).values.mean())
        self.test_step_outputs.clear()

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=5e-4)
        steps_per_epoch = 45000 // self.hparams.batch_size
        scheduler_dict = {
            "scheduler": torch.optim.lr_scheduler.OneCycleLR(
                optimizer, 0.1, epochs=self.trainer.max_epochs, steps_per_epoch=steps_per_epoch),
            "interval": "step",
        }
        return {"optimizer": optimizer, "lr_scheduler": scheduler_dict}


if __name__ == "__main__":
    pl.seed_everything(7)
    normalize = transforms.Normalize(mean=[0.4914, 0.4822, 0.4465], std=[0.2470, 0.2435, 0.2616])
    train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), normalize])
    test_tf = transforms.Compose([transforms.ToTensor(), normalize])
    train_ds = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=train_tf)
    test_ds = torchvision.datasets.CIFAR10("data", train=False, download=True, transform=test_tf)

    model = LitResnet(lr=0.05)
    trainer = pl.Trainer(
        max_epochs=30,
        accelerator="gpu",
        devices=1,
        callbacks=[LearningRateMonitor(logging_interval="step"), ModelCheckpoint(monitor="val_acc", mode="max")],
    )
    trainer.fit(model, DataLoader(train_ds, batch_size=256, shuffle=True, num_workers=8),
                DataLoader(test_ds, batch_size=512, num_workers=8))
    trainer.test(model, DataLoader(test_ds, batch_size=512, num_workers=8))
