"""Mean Teacher semi-supervised training (Tarvainen & Valpola, 2017), ported from the PyTorch 0.3 code.

The original used Variable(ema_input, volatile=True) for the teacher input.
"""
import argparse
import copy
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader, Subset


def create_model(num_classes):
    model = torchvision.models.resnet18(num_classes=num_classes)
    model.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    model.maxpool = nn.Identity()
    return model


def update_ema_variables(model, ema_model, alpha, global_step):
    alpha = min(1 - 1 / (global_step + 1), alpha)
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(alpha).add_(param, alpha=1 - alpha)


def sigmoid_rampup(current, rampup_length):
    if rampup_length == 0:
        return 1.0
    current = max(0.0, min(current, rampup_length))
    phase = 1.0 - current / rampup_length
    return float(torch.exp(torch.tensor(-5.0 * phase * phase)))


class TwoCrops:
    def __init__(self, tf):
        self.tf = tf

    def __call__(self, x):
        return self.tf(x), self.tf(x)


@torch.no_grad()
def validate(loader, net, device):
    net.eval()
    correct = total = 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (net(x).argmax(1) == y).sum().item()
        total += y.numel()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", type=int, default=4000)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--ema_decay", type=float, default=0.99)
    ap.add_argument("--consistency", type=float, default=100.0)
    ap.add_argument("--rampup", type=int, default=5)
    args = ap.parse_args()
    device = torch.device("cuda")

    aug = T.Compose([T.RandomCrop(32, 4), T.RandomHorizontalFlip(), T.ToTensor(),
                     T.Normalize((0.49, 0.48, 0.45), (0.25, 0.24, 0.26))])
    labeled = Subset(torchvision.datasets.CIFAR10("data", train=True, download=True, transform=aug), range(args.labels))
    unlabeled = torchvision.datasets.CIFAR10("data", train=True, transform=TwoCrops(aug))
    test_set = torchvision.datasets.CIFAR10("data", train=False, transform=T.Compose(aug.transforms[2:]))
    labeled_loader = DataLoader(labeled, batch_size=64, shuffle=True, num_workers=4, drop_last=True)
    unlabeled_loader = DataLoader(unlabeled, batch_size=192, shuffle=True, num_workers=8, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=512, num_workers=4)

    model = create_model(10).to(device)
    ema_model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=2e-4)

    global_step = 0
    for epoch in range(args.epochs):
        model.train()
        ema_model.train()
        for i, ((x_l, y_l), ((x_u1, x_u2), _)) in enumerate(zip(itertools.cycle(labeled_loader), unlabeled_loader)):
            x_l, y_l = x_l.to(device), y_l.to(device)
            x_u1, x_u2 = x_u1.to(device), x_u2.to(device)
            n = x_l.size(0)

            student_logits = model(torch.cat([x_l, x_u1]))
            ema_logits = ema_model(x_u2)  # expect: OOM113

            class_loss = F.cross_entropy(student_logits[:n], y_l)
            w = args.consistency * sigmoid_rampup(epoch, args.rampup)
            consistency_loss = F.mse_loss(student_logits[n:].softmax(-1), ema_logits.softmax(-1))
            loss = class_loss + w * consistency_loss

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            global_step += 1
            update_ema_variables(model, ema_model, args.ema_decay, global_step)

            if i % 50 == 0:
                print(f"[{epoch}][{i}] class {class_loss.item():.3f} cons {consistency_loss.item():.4f}")
                torch.cuda.empty_cache()  # expect: OOM106

        print(f"epoch {epoch}: student {validate(test_loader, model, device):.4f} "
              f"teacher {validate(test_loader, ema_model, device):.4f}")


if __name__ == "__main__":
    main()
