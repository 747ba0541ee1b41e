"""Lightning image classifier around torchvision ConvNeXt-Small (bf16-mixed, accumulate_grad_batches=2)."""
import lightning as L
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

HPARAMS = dict(
    arch="convnext_small",
    num_classes=196,
    image_size=224,
    batch_size=48,
    lr=4e-4,
    weight_decay=0.05,
    accumulate=2,
    max_steps=5,
)


class RandomCars(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(0, self.num_classes, ()).item()


class LitClassifier(L.LightningModule):
    def __init__(self, arch, num_classes, lr, weight_decay, **kwargs):
        super().__init__()
        self.save_hyperparameters()
        self.net = getattr(torchvision.models, arch)(weights=None, num_classes=num_classes)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_steps)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def main(hp=HPARAMS):
    model = LitClassifier(**hp)
    n = hp["batch_size"] * hp["accumulate"] * hp["max_steps"]
    loader = DataLoader(RandomCars(n, hp["image_size"], hp["num_classes"]), batch_size=hp["batch_size"],
                        shuffle=True, num_workers=4, drop_last=True)
    trainer = L.Trainer(
        accelerator="gpu",
        devices=1,
        precision="bf16-mixed",
        max_steps=hp["max_steps"],
        accumulate_grad_batches=hp["accumulate"],
        gradient_clip_val=1.0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(model, loader)
    print("peak GiB", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
