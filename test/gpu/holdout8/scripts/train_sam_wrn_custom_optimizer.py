"""CIFAR-100 with a WideResNet-28-10 and Sharpness-Aware Minimization (SAM, Foret et al. 2021).

SAM is a torch.optim.Optimizer subclass wrapping SGD (nesterov): every step does two forward/backward passes,
the first to find the adversarial weight perturbation e(w), the second at w + e(w). BatchNorm running stats are
only updated on the first pass. Data are random 32x32 images.
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
        defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                e_w = (torch.pow(p, 2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        shared_device = self.param_groups[0]["params"][0].device
        return torch.norm(torch.stack([
            ((torch.abs(p) if group["adaptive"] else 1.0) * p.grad).norm(p=2).to(shared_device)
            for group in self.param_groups for p in group["params"] if p.grad is not None]), p=2)


def disable_running_stats(model):
    def _disable(module):
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.backup_momentum = module.momentum
            module.momentum = 0
    model.apply(_disable)


def enable_running_stats(model):
    def _enable(module):
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and hasattr(module, "backup_momentum"):
            module.momentum = module.backup_momentum
    model.apply(_enable)


class BasicBlock(nn.Module):
    def __init__(self, in_planes, out_planes, stride, dropout):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_planes)
        self.conv2 = nn.Conv2d(out_planes, out_planes, 3, stride=1, padding=1, bias=False)
        self.dropout = dropout
        self.shortcut = None
        if stride != 1 or in_planes != out_planes:
            self.shortcut = nn.Conv2d(in_planes, out_planes, 1, stride=stride, bias=False)

    def forward(self, x):
        o = F.relu(self.bn1(x))
        y = self.conv1(o)
        y = F.relu(self.bn2(y))
        if self.dropout > 0:
            y = F.dropout(y, p=self.dropout, training=self.training)
        y = self.conv2(y)
        return y + (self.shortcut(o) if self.shortcut is not None else x)


class WideResNet(nn.Module):
    def __init__(self, depth, width_factor, dropout, in_channels, labels):
        super().__init__()
        n = (depth - 4) // 6
        widths = [16, 16 * width_factor, 32 * width_factor, 64 * width_factor]
        layers = [nn.Conv2d(in_channels, widths[0], 3, padding=1, bias=False)]
        for i, stride in enumerate([1, 2, 2]):
            for j in range(n):
                layers.append(BasicBlock(widths[i] if j == 0 else widths[i + 1], widths[i + 1],
                                         stride if j == 0 else 1, dropout))
        layers += [nn.BatchNorm2d(widths[3]), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                   nn.Linear(widths[3], labels)]
        self.f = nn.Sequential(*layers)

    def forward(self, x):
        return self.f(x)


def smooth_crossentropy(pred, gold, smoothing=0.1):
    n_class = pred.size(1)
    one_hot = torch.full_like(pred, fill_value=smoothing / (n_class - 1))
    one_hot.scatter_(dim=1, index=gold.unsqueeze(1), value=1.0 - smoothing)
    log_prob = F.log_softmax(pred, dim=1)
    return F.kl_div(input=log_prob, target=one_hot, reduction="none").sum(-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adaptive", default=True, type=bool)
    parser.add_argument("--batch_size", default=256, type=int)
    parser.add_argument("--depth", default=28, type=int)
    parser.add_argument("--dropout", default=0.0, type=float)
    parser.add_argument("--epochs", default=1, type=int)
    parser.add_argument("--label_smoothing", default=0.1, type=float)
    parser.add_argument("--learning_rate", default=0.1, type=float)
    parser.add_argument("--momentum", default=0.9, type=float)
    parser.add_argument("--rho", default=2.0, type=float)
    parser.add_argument("--weight_decay", default=0.0005, type=float)
    parser.add_argument("--width_factor", default=10, type=int)
    parser.add_argument("--steps_per_epoch", default=5, type=int)
    args = parser.parse_args()

    device = torch.device("cuda")
    n = args.batch_size * args.steps_per_epoch
    train_set = TensorDataset(torch.randn(n, 3, 32, 32), torch.randint(0, 100, (n,)))
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True)

    model = WideResNet(args.depth, args.width_factor, args.dropout, in_channels=3, labels=100).to(device)
    print(f"WRN-{args.depth}-{args.width_factor}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
    optimizer = SAM(model.parameters(), torch.optim.SGD, rho=args.rho, adaptive=args.adaptive,
                    lr=args.learning_rate, momentum=args.momentum, weight_decay=args.weight_decay, nesterov=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer.base_optimizer, step_size=1, gamma=0.2)

    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        for step, (inputs, targets) in enumerate(loader):
            inputs, targets = inputs.to(device), targets.to(device)

            # first forward-backward step
            enable_running_stats(model)
            predictions = model(inputs)
            loss = smooth_crossentropy(predictions, targets, smoothing=args.label_smoothing)
            loss.mean().backward()
            optimizer.first_step(zero_grad=True)

            # second forward-backward step
            disable_running_stats(model)
            smooth_crossentropy(model(inputs), targets, smoothing=args.label_smoothing).mean().backward()
            optimizer.second_step(zero_grad=True)

            with torch.no_grad():
                correct = torch.argmax(predictions.data, 1) == targets
            print(f"epoch {epoch} step {step} loss {loss.mean().item():.4f} acc {correct.float().mean().item():.3f} "
                  f"({time.time() - t0:.1f}s)")
        scheduler.step()
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
