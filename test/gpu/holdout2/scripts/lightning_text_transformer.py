"""Long-review sentiment classifier: nn.TransformerEncoder in a LightningModule."""
import math

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

HPARAMS = dict(
    vocab_size=30000,
    d_model=768,
    nhead=12,
    num_layers=8,
    dim_ff=3072,
    dropout=0.1,
    max_len=4096,        # capacity of the positional table
    crop_len=512,        # what the collate fn actually feeds
    num_classes=3,
    batch_size=32,
    lr=1e-4,
    accumulate=2,
    max_steps=3,
)
PAD = 0


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        pe = torch.zeros(max_len, d_model)
        pos = torch.arange(max_len).unsqueeze(1).float()
        div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.size(1)])


class Reviews(Dataset):
    def __init__(self, n, vocab, num_classes, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.lengths = torch.randint(200, 1500, (n,), generator=g).tolist()
        self.labels = torch.randint(0, num_classes, (n,), generator=g).tolist()
        self.vocab = vocab

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        return torch.randint(1, self.vocab, (self.lengths[i],)), self.labels[i]


def make_collate(crop_len):
    def collate(batch):
        out = torch.full((len(batch), crop_len), PAD, dtype=torch.long)
        for i, (ids, _) in enumerate(batch):
            ids = ids[:crop_len]
            out[i, : len(ids)] = ids
        labels = torch.tensor([y for _, y in batch])
        return out, labels
    return collate


class ReviewClassifier(pl.LightningModule):
    def __init__(self, **hp):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(hp["vocab_size"], hp["d_model"], padding_idx=PAD)
        self.pos = PositionalEncoding(hp["d_model"], hp["max_len"], hp["dropout"])
        layer = nn.TransformerEncoderLayer(hp["d_model"], hp["nhead"], hp["dim_ff"], hp["dropout"],
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=hp["num_layers"], enable_nested_tensor=False)
        self.norm = nn.LayerNorm(hp["d_model"])
        self.cls = nn.Linear(hp["d_model"], hp["num_classes"])

    def forward(self, ids):
        pad_mask = ids == PAD
        x = self.pos(self.embed(ids) * math.sqrt(self.hparams.d_model))
        x = self.norm(self.encoder(x, src_key_padding_mask=pad_mask))
        keep = (~pad_mask).unsqueeze(-1).to(x.dtype)
        return self.cls((x * keep).sum(1) / keep.sum(1))

    def training_step(self, batch, batch_idx):
        ids, y = batch
        loss = F.cross_entropy(self(ids), y)
        self.log("loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        ids, y = batch
        acc = (self(ids).argmax(-1) == y).float().mean()
        self.log("val_acc", acc)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.01)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.hparams.lr,
                                                    total_steps=self.hparams.max_steps + 1)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


if __name__ == "__main__":
    hp = HPARAMS
    collate = make_collate(hp["crop_len"])
    n_train = hp["batch_size"] * hp["accumulate"] * hp["max_steps"]
    train_loader = DataLoader(Reviews(n_train, hp["vocab_size"], hp["num_classes"]), batch_size=hp["batch_size"],
                              shuffle=True, collate_fn=collate, num_workers=2)
    val_loader = DataLoader(Reviews(hp["batch_size"] * 2, hp["vocab_size"], hp["num_classes"], seed=1),
                            batch_size=hp["batch_size"], collate_fn=collate)

    model = ReviewClassifier(**hp)
    trainer = pl.Trainer(
        accelerator="cuda",
        devices=1,
        precision="16-mixed",
        accumulate_grad_batches=hp["accumulate"],
        gradient_clip_val=1.0,
        max_steps=hp["max_steps"],
        limit_val_batches=2,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(model, train_loader, val_loader)
    scaler = getattr(getattr(trainer.strategy, "precision_plugin", None), "scaler", None)
    print("done:", trainer.global_step, "optimizer steps; loss scale", scaler.get_scale() if scaler else None)
