import os

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, random_split
from torchvision import transforms
from torchvision.datasets import MNIST
import lightning as L


class LitClassifier(L.LightningModule):
    def __init__(self, hidden_dim: int = 128, lr: float = 1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.backbone = nn.Sequential(
            nn.Flatten(),
            nn.Linear(28 * 28, hidden_dim),
            nn.ReLU(),
            nn.Linear(hidden_dim, hidden_dim),
            nn.ReLU(),
            nn.Linear(hidden_dim, 10),
        )
        self.training_step_outputs = []
        self.validation_step_outputs = []

    def forward(self, x):
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.training_step_outputs.append(loss)  # expect: OOM101
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        epoch_mean = torch.stack(self.training_step_outputs).mean()
        self.log("train_loss_epoch", epoch_mean)
        self.training_step_outputs.clear()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.validation_step_outputs.append({"logits": logits, "y": y})
        self.log("val_loss", loss, prog_bar=True)

    def on_validation_epoch_end(self):
        all_logits = torch.cat([o["logits"] for o in self.validation_step_outputs])
        all_y = torch.cat([o["y"] for o in self.validation_step_outputs])
        acc = (all_logits.argmax(dim=1) == all_y).float().mean()
        self.log("val_acc", acc, prog_bar=True)
        self.validation_step_outputs.clear()

    def test_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("test_acc", (logits.argmax(1) == y).float().mean())

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        x, _ = batch
        return self(x).softmax(dim=-1)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main():
    L.seed_everything(42)
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    dataset = MNIST(os.getcwd(), train=True, download=True, transform=transform)
    mnist_test = MNIST(os.getcwd(), train=False, download=True, transform=transform)
    mnist_train, mnist_val = random_split(dataset, [55000, 5000])

    train_loader = DataLoader(mnist_train, batch_size=64, shuffle=True, num_workers=4)
    val_loader = DataLoader(mnist_val, batch_size=256, num_workers=4)
    test_loader = DataLoader(mnist_test, batch_size=256, num_workers=4)

    model = LitClassifier(hidden_dim=256)
    trainer = L.Trainer(max_epochs=5, accelerator="gpu", devices=1, precision="bf16-mixed")
    trainer.fit(model, train_loader, val_loader)
    trainer.test(model, dataloaders=test_loader)
    predictions = trainer.predict(model, dataloaders=test_loader)
    print(len(predictions))


if __name__ == "__main__":
    main()
