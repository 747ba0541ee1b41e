"""A LightningModule-shaped class (training_step / validation_step / configure_optimizers) driven by a
hand-written loop instead of a Trainer. ResNet-152 on 224 px images, fp16 autocast."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import resnet152

HPARAMS = dict(num_classes=250, lr=0.05, momentum=0.9, weight_decay=5e-5, batch_size=64, image_size=224,
               max_epochs=2, limit_train_batches=4, limit_val_batches=2)


class LitClassifier(nn.Module):
    def __init__(self, num_classes, lr, momentum, weight_decay, **_):
        super().__init__()
        self.save_hparams = dict(lr=lr, momentum=momentum, weight_decay=weight_decay)
        self.backbone = resnet152(weights=None, num_classes=num_classes)

    def forward(self, x):
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        return {"loss": loss, "acc": (logits.argmax(1) == y).float().mean().detach()}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return {"val_loss": F.cross_entropy(logits, y), "val_acc": (logits.argmax(1) == y).float().mean()}

    def configure_optimizers(self):
        hp = self.save_hparams
        opt = torch.optim.SGD(self.parameters(), lr=hp["lr"], momentum=hp["momentum"],
                              weight_decay=hp["weight_decay"])
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
        return [opt], [sched]


class RandomImages(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % self.num_classes


def fit(module, train_loader, val_loader, max_epochs, limit_train_batches, limit_val_batches, device="cuda"):
    module.to(device)
    [optimizer], [scheduler] = module.configure_optimizers()
    scaler = torch.amp.GradScaler(device)
    for epoch in range(max_epochs):
        module.train()
        for batch_idx, batch in enumerate(train_loader):
            if batch_idx >= limit_train_batches:
                break
            batch = [t.to(device, non_blocking=True) for t in batch]
            with torch.autocast(device, dtype=torch.float16):
                out = module.training_step(batch, batch_idx)
            optimizer.zero_grad()
            scaler.scale(out["loss"]).backward()
            scaler.step(optimizer)
            scaler.update()
            print(f"epoch {epoch} batch {batch_idx} loss {out['loss'].item():.3f} acc {out['acc'].item():.3f}")
        scheduler.step()

        module.eval()
        outs = []
        with torch.no_grad(), torch.autocast(device, dtype=torch.float16):
            for batch_idx, batch in enumerate(val_loader):
                if batch_idx >= limit_val_batches:
                    break
                outs.append(module.validation_step([t.to(device) for t in batch], batch_idx))
        val_loss = torch.stack([o["val_loss"] for o in outs]).mean()
        print(f"epoch {epoch} val_loss {val_loss.item():.3f}")


if __name__ == "__main__":
    hp = HPARAMS
    module = LitClassifier(**hp)
    train_loader = DataLoader(RandomImages(hp["batch_size"] * hp["limit_train_batches"], hp["image_size"],
                                           hp["num_classes"]), batch_size=hp["batch_size"], shuffle=True, num_workers=2)
    val_loader = DataLoader(RandomImages(2 * hp["batch_size"] * hp["limit_val_batches"], hp["image_size"],
                                         hp["num_classes"]), batch_size=2 * hp["batch_size"], num_workers=2)
    fit(module, train_loader, val_loader, hp["max_epochs"], hp["limit_train_batches"], hp["limit_val_batches"])
