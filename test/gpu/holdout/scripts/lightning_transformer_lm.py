"""Decoder-only LM (nn.TransformerEncoder + causal mask) trained with PyTorch Lightning, bf16-mixed."""
import math

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class TokenBlocks(Dataset):
    def __init__(self, n, seq_len, vocab_size):
        self.data = torch.randint(0, vocab_size, (n, seq_len + 1))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i, :-1], self.data[i, 1:]


class TokenDataModule(pl.LightningDataModule):
    def __init__(self, batch_size=32, seq_len=512, vocab_size=16384, n_batches=8):
        super().__init__()
        self.batch_size = batch_size
        self.seq_len = seq_len
        self.vocab_size = vocab_size
        self.n_batches = n_batches

    def setup(self, stage=None):
        self.train_ds = TokenBlocks(self.batch_size * self.n_batches, self.seq_len, self.vocab_size)

    def train_dataloader(self):
        return DataLoader(self.train_ds, batch_size=self.batch_size, shuffle=True, drop_last=True)


class CausalLM(pl.LightningModule):
    def __init__(self, vocab_size=16384, d_model=768, nhead=12, num_layers=8, dim_ff=3072, max_len=2048,
                 dropout=0.1, lr=3e-4):
        super().__init__()
        self.save_hyperparameters()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead, dim_feedforward=dim_ff, dropout=dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=num_layers, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, idx):
        T = idx.size(1)
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)[None]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=idx.device), diagonal=1)
        x = self.blocks(x, mask=causal, is_causal=True)
        return self.lm_head(self.ln_f(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        self.log("loss", loss, prog_bar=False)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, betas=(0.9, 0.95), weight_decay=0.1)
        warmup = 2
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))
        return [opt], [{"scheduler": sched, "interval": "step"}]


def main():
    pl.seed_everything(42)
    dm = TokenDataModule(batch_size=32, seq_len=512)
    model = CausalLM()
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=1,
        precision="bf16-mixed",
        max_steps=4,
        accumulate_grad_batches=2,
        gradient_clip_val=1.0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir="/tmp/holdout-pl-lm",
    )
    trainer.fit(model, datamodule=dm)
    print("final loss", trainer.callback_metrics.get("loss"))


if __name__ == "__main__":
    main()
