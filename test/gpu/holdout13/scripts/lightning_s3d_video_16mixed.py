"""Action recognition with torchvision S3D in PyTorch Lightning (16-mixed precision)."""
from typing import NamedTuple

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models.video import s3d


class HParams(NamedTuple):
    num_classes: int = 174          # something-something-v2
    clip_len: int = 16
    crop: int = 224
    batch_size: int = 8
    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 1e-4
    max_steps: int = 6


class RandomClips(Dataset):
    def __init__(self, hp: HParams, n: int):
        self.hp, self.n = hp, n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        clip = torch.randn(3, self.hp.clip_len, self.hp.crop, self.hp.crop)
        return clip, torch.randint(0, self.hp.num_classes, ()).item()


class VideoClassifier(L.LightningModule):
    def __init__(self, hp: HParams):
        super().__init__()
        self.save_hyperparameters(hp._asdict())
        self.hp = hp
        self.net = s3d(weights=None, num_classes=hp.num_classes)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        clips, labels = batch
        logits = self(clips)
        loss = F.cross_entropy(logits, labels)
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hp.lr, momentum=self.hp.momentum,
                              weight_decay=self.hp.weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.hp.max_steps)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


if __name__ == "__main__":
    hp = HParams()
    dm = DataLoader(RandomClips(hp, hp.batch_size * hp.max_steps), batch_size=hp.batch_size,
                    shuffle=True, num_workers=4, drop_last=True)
    model = VideoClassifier(hp)
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="16-mixed", max_steps=hp.max_steps,
                        logger=False, enable_checkpointing=False, enable_model_summary=True,
                        log_every_n_steps=1)
    trainer.fit(model, train_dataloaders=dm)
    print("peak alloc GiB:", torch.cuda.max_memory_allocated() / 2**30)
