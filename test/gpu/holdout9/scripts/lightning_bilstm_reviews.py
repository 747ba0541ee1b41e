"""Review sentiment with a BiLSTM, trained with Lightning (bf16-mixed)."""
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Reviews(Dataset):
    def __init__(self, n, seq_len, vocab_size, num_classes):
        self.x = torch.randint(1, vocab_size, (n, seq_len))
        self.y = torch.randint(0, num_classes, (n,))

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class LitBiLSTM(L.LightningModule):
    def __init__(self, vocab_size=50000, embed_dim=300, hidden_size=768, num_layers=2, num_classes=5,
                 dropout=0.3, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers, batch_first=True,
                            bidirectional=True, dropout=dropout)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(4 * hidden_size, num_classes)  # mean + max pooled, both directions

    def forward(self, x):
        h, _ = self.lstm(self.embedding(x))
        pooled = torch.cat([h.mean(dim=1), h.max(dim=1).values], dim=-1)
        return self.classifier(self.dropout(pooled))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(-1) == y).float().mean())

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def main(batch_size=128, seq_len=512, max_steps=20, precision="bf16-mixed", vocab_size=50000):
    L.seed_everything(0)
    train = Reviews(batch_size * max_steps, seq_len, vocab_size, 5)
    val = Reviews(batch_size * 4, seq_len, vocab_size, 5)
    model = LitBiLSTM(vocab_size=vocab_size)
    trainer = L.Trainer(
        accelerator="gpu",
        devices=1,
        max_steps=max_steps,
        precision=precision,
        gradient_clip_val=1.0,
        val_check_interval=10,
        limit_val_batches=4,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(model,
                DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=2),
                DataLoader(val, batch_size=batch_size, num_workers=2))
    print(trainer.callback_metrics)
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
