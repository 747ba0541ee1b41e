"""Keras-style fit() loop for PyTorch with callbacks, activation/gradient hooks and saliency dumps.

Used for the "dead ReLU" study: forward hooks record per-layer activation statistics every step.
"""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from torchvision import datasets, transforms


class Callback:
    def on_batch_end(self, trainer, step, logs): ...
    def on_epoch_end(self, trainer, epoch, logs): ...


class TensorBoardCallback(Callback):
    def __init__(self, logdir):
        self.w = SummaryWriter(logdir)

    def on_batch_end(self, trainer, step, logs):
        if step % 50 == 0:
            for k, v in logs.items():
                self.w.add_scalar(f"batch/{k}", v, step)

    def on_epoch_end(self, trainer, epoch, logs):
        for k, v in logs.items():
            self.w.add_scalar(f"epoch/{k}", v, epoch)


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", patience=4):
        self.monitor, self.patience, self.best, self.wait = monitor, patience, float("inf"), 0

    def on_epoch_end(self, trainer, epoch, logs):
        if logs[self.monitor] < self.best:
            self.best, self.wait = logs[self.monitor], 0
            trainer.best_state = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
        else:
            self.wait += 1
            trainer.stop_training = self.wait >= self.patience


class Trainer:
    def __init__(self, model, optimizer, callbacks=(), device="cuda"):
        self.model, self.opt, self.device = model.to(device), optimizer, device
        self.callbacks = list(callbacks)
        self.stop_training = False
        self.best_state = None
        self.act_stats = defaultdict(list)
        self.grad_norms = defaultdict(list)
        self._handles = []
        for name, mod in model.named_modules():
            if isinstance(mod, nn.ReLU):
                self._handles.append(mod.register_forward_hook(self._act_hook(name)))
        for name, p in model.named_parameters():
            self._handles.append(p.register_hook(self._grad_hook(name)))

    def _act_hook(self, name):
        def hook(module, inputs, output):
            if module.training:
                self.act_stats[name].append((output.detach() == 0).float().mean().item())
        return hook

    def _grad_hook(self, name):
        def hook(grad):
            self.grad_norms[name].append(grad.detach().norm().item())
        return hook

    def train_step(self, x, y):
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return {"loss": loss.item(), "acc": (logits.argmax(1) == y).float().mean().item()}

    def evaluate(self, loader):
        torch.set_grad_enabled(False)
        self.model.eval()
        tot, correct, n = 0.0, 0, 0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            logits = self.model(x)
            tot += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(1) == y).sum().item()
            n += y.numel()
        torch.set_grad_enabled(True)
        return {"val_loss": tot / n, "val_acc": correct / n}

    def eval_saliency(self, x, y):
        """Vanilla gradient saliency: needs a backward pass, so no no_grad here on purpose."""
        self.model.eval()
        x = x.to(self.device).requires_grad_(True)
        score = self.model(x).gather(1, y.to(self.device)[:, None]).sum()
        score.backward()
        sal = x.grad.abs().amax(dim=1)
        self.model.zero_grad(set_to_none=True)
        return sal.detach().cpu()

    def fit(self, train_loader, val_loader, epochs):
        step = 0
        for epoch in range(epochs):
            self.model.train()
            sums = defaultdict(float)
            for x, y in train_loader:
                logs = self.train_step(x.to(self.device), y.to(self.device))
                for k, v in logs.items():
                    sums[k] += v
                for cb in self.callbacks:
                    cb.on_batch_end(self, step, logs)
                step += 1
            logs = {k: v / len(train_loader) for k, v in sums.items()}
            logs.update(self.evaluate(val_loader))
            dead = {k: sum(v[-len(train_loader):]) / len(train_loader) for k, v in self.act_stats.items()}
            print(f"epoch {epoch} {logs} dead-relu {max(dead.values(), default=0):.3f}")
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, logs)
            if self.stop_training:
                break
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        for h in self._handles:
            h.remove()


if __name__ == "__main__":
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.2860,), (0.3530,))])
    tr = DataLoader(datasets.FashionMNIST("data", True, tf, download=True), 256, shuffle=True, num_workers=4)
    va = DataLoader(datasets.FashionMNIST("data", False, tf, download=True), 1024, num_workers=4)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                        nn.Linear(512, 10))
    trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9),
                      callbacks=[TensorBoardCallback("runs/hooks"), EarlyStopping(patience=3)])
    trainer.fit(tr, va, epochs=30)
    xb, yb = next(iter(va))
    torch.save(trainer.eval_saliency(xb[:16], yb[:16]), "saliency.pt")
