"""Sentence-pair regression (STS-B) with a frozen encoder + trainable head, Lightning 2.x."""
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch import Trainer
from lightning.pytorch.callbacks import EarlyStopping
from transformers import AutoModel, AutoTokenizer


class STSRegressor(L.LightningModule):
    def __init__(self, encoder_name="sentence-transformers/all-MiniLM-L6-v2", lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = AutoModel.from_pretrained(encoder_name)
        for p in self.encoder.parameters():
            p.requires_grad_(False)
        hidden = self.encoder.config.hidden_size
        self.head = nn.Sequential(nn.Linear(4 * hidden, 256), nn.GELU(), nn.Linear(256, 1))
        self.training_step_outputs = []
        self.validation_step_outputs = []
        self.predictions = []

    def encode(self, batch, prefix):
        out = self.encoder(input_ids=batch[f"{prefix}_input_ids"], attention_mask=batch[f"{prefix}_attention_mask"])
        mask = batch[f"{prefix}_attention_mask"].unsqueeze(-1).float()
        return (out.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-6)

    def forward(self, batch):
        a = self.encode(batch, "a")
        b = self.encode(batch, "b")
        feats = torch.cat([a, b, (a - b).abs(), a * b], dim=-1)
        return self.head(feats).squeeze(-1)

    def training_step(self, batch, batch_idx):
        pred = self(batch)
        loss = F.mse_loss(pred, batch["score"])
        # no optimizer.zero_grad() here: Lightning clears the gradients itself
        self.training_step_outputs.append(loss.detach())
        self.log("train/mse", loss, on_step=True, on_epoch=True)
        return loss

    def on_train_epoch_end(self):
        self.log("train/epoch_mse", torch.stack(self.training_step_outputs).mean())
        self.training_step_outputs.clear()

    def validation_step(self, batch, batch_idx):
        pred = self(batch)
        self.validation_step_outputs.append({"pred": pred, "target": batch["score"]})

    def on_validation_epoch_end(self):
        preds = torch.cat([o["pred"] for o in self.validation_step_outputs])
        targets = torch.cat([o["target"] for o in self.validation_step_outputs])
        vx, vy = preds - preds.mean(), targets - targets.mean()
        pearson = (vx * vy).sum() / (vx.norm() * vy.norm() + 1e-8)
        self.log("val/pearson", pearson, prog_bar=True)
        self.validation_step_outputs.clear()

    def test_step(self, batch, batch_idx):
        pred = self(batch)
        self.log("test/mse", F.mse_loss(pred, batch["score"]))

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        scores = self(batch)
        self.predictions.append(scores.cpu())
        return scores

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.head.parameters(), lr=self.hparams.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        return [opt], [sched]


class STSDataModule(L.LightningDataModule):
    def __init__(self, tokenizer_name, batch_size=64):
        super().__init__()
        self.tok = AutoTokenizer.from_pretrained(tokenizer_name)
        self.batch_size = batch_size

    def setup(self, stage=None):
        from datasets import load_dataset
        ds = load_dataset("glue", "stsb")

        def enc(ex):
            a = self.tok(ex["sentence1"], truncation=True, max_length=128, padding="max_length")
            b = self.tok(ex["sentence2"], truncation=True, max_length=128, padding="max_length")
            return {"a_input_ids": a["input_ids"], "a_attention_mask": a["attention_mask"],
                    "b_input_ids": b["input_ids"], "b_attention_mask": b["attention_mask"],
                    "score": [s / 5.0 for s in ex["label"]]}

        self.ds = ds.map(enc, batched=True).with_format("torch")

    def train_dataloader(self):
        return torch.utils.data.DataLoader(self.ds["train"], batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return torch.utils.data.DataLoader(self.ds["validation"], batch_size=self.batch_size)

    def test_dataloader(self):
        return torch.utils.data.DataLoader(self.ds["validation"], batch_size=self.batch_size)


if __name__ == "__main__":
    model = STSRegressor()
    dm = STSDataModule(model.hparams.encoder_name)
    trainer = Trainer(max_epochs=10, accelerator="auto", devices=1, precision="bf16-mixed",
                      callbacks=[EarlyStopping(monitor="val/pearson", mode="max", patience=3)])
    trainer.fit(model, datamodule=dm)
    trainer.test(model, datamodule=dm)
    preds = trainer.predict(model, dataloaders=dm.test_dataloader())
