"""Sound event classification on log-mel spectrograms with a torchvision ResNet-18 inside Lightning."""
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import resnet18

HPARAMS = {
    "n_mels": 128,
    "frames": 1024,        # ~10 s at a 10 ms hop
    "num_classes": 50,
    "batch_size": 48,
    "lr": 2e-3,
    "weight_decay": 1e-4,
    "accumulate": 2,
    "max_steps": 6,        # optimizer steps
}


class MelClips(Dataset):
    def __init__(self, n, n_mels, frames, num_classes):
        self.n, self.shape, self.num_classes = n, (1, n_mels, frames), num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        spec = torch.randn(self.shape).abs().add_(1e-6).log_()
        return spec, torch.randint(self.num_classes, ()).item()


class SpecAugment(nn.Module):
    def __init__(self, freq_mask=24, time_mask=96):
        super().__init__()
        self.freq_mask, self.time_mask = freq_mask, time_mask

    def forward(self, x):
        if not self.training:
            return x
        b, _, f, t = x.shape
        f0 = torch.randint(0, f - self.freq_mask, (1,)).item()
        t0 = torch.randint(0, t - self.time_mask, (1,)).item()
        x = x.clone()
        x[:, :, f0:f0 + self.freq_mask, :] = 0
        x[:, :, :, t0:t0 + self.time_mask] = 0
        return x


class AudioClassifier(L.LightningModule):
    def __init__(self, hp: dict):
        super().__init__()
        self.save_hyperparameters(hp)
        net = resnet18(weights=None, num_classes=self.hparams.num_classes)
        net.conv1 = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.augment = SpecAugment()
        self.bn0 = nn.BatchNorm2d(1)
        self.net = net

    def forward(self, x):
        return self.net(self.augment(self.bn0(x)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.NAdam(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.hparams.lr,
                                                    total_steps=self.hparams.max_steps + 1)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def main(hp=HPARAMS):
    model = AudioClassifier(hp)
    n = hp["batch_size"] * hp["accumulate"] * hp["max_steps"]
    loader = DataLoader(MelClips(n, hp["n_mels"], hp["frames"], hp["num_classes"]),
                        batch_size=hp["batch_size"], shuffle=True, num_workers=2, drop_last=True)
    trainer = L.Trainer(
        accelerator="gpu", devices=1,
        precision="bf16-mixed",
        max_steps=hp["max_steps"],
        accumulate_grad_batches=hp["accumulate"],
        gradient_clip_val=1.0,
        logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(model, loader)
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
