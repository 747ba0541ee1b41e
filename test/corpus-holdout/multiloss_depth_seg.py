"""NYUv2 multi-task: semantic segmentation + depth + surface normals on a shared ResNet-50 encoder.

Loss weighting: fixed weights during head warm-up, then GradNorm-style rebalancing every `rebalance_every` steps.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision.models import resnet50

TASKS = {"seg": 1.0, "depth": 1.0, "normal": 0.5}


class Decoder(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(cin, 256, 3, padding=1), nn.BatchNorm2d(256), nn.ReLU(True),
                                 nn.Conv2d(256, cout, 1))

    def forward(self, f, size):
        return F.interpolate(self.net(f), size=size, mode="bilinear", align_corners=False)


class MultiTaskNet(nn.Module):
    def __init__(self, n_classes=13):
        super().__init__()
        r = resnet50(weights="IMAGENET1K_V2", replace_stride_with_dilation=[False, True, True])
        self.encoder = nn.Sequential(*list(r.children())[:-2])
        self.heads = nn.ModuleDict({"seg": Decoder(2048, n_classes), "depth": Decoder(2048, 1),
                                    "normal": Decoder(2048, 3)})

    def forward(self, x):
        f = self.encoder(x)
        return {k: h(f, x.shape[-2:]) for k, h in self.heads.items()}


def task_loss(name, pred, batch):
    if name == "seg":
        return F.cross_entropy(pred, batch["seg"], ignore_index=255)
    valid = batch["depth"] > 0
    if name == "depth":
        return F.l1_loss(pred.squeeze(1)[valid], batch["depth"][valid])
    cos = F.cosine_similarity(F.normalize(pred, dim=1), batch["normal"], dim=1)
    return (1 - cos)[valid].mean()


def warmup_heads(model, loader, device, iters=500):
    """Train only the decoders for a few hundred steps so early encoder gradients are sane."""
    head_opt = torch.optim.Adam(model.heads.parameters(), lr=1e-3)
    model.encoder.requires_grad_(False)
    for it, batch in enumerate(loader):
        if it == iters:
            break
        batch = {k: v.to(device) for k, v in batch.items()}
        out = model(batch["image"])
        loss = sum(TASKS[t] * task_loss(t, out[t], batch) for t in TASKS)
        loss.backward()
        head_opt.step()  # expect: OOM103
    model.encoder.requires_grad_(True)


def gradnorm_weights(losses, shared_param, weights, alpha=1.5, initial=None):
    """Per-task gradient norms on the last shared layer; returns new weights (no graph)."""
    norms = []
    for t, l in losses.items():
        g = torch.autograd.grad(weights[t] * l, shared_param, retain_graph=True)[0]
        norms.append(g.norm().detach())
    norms = torch.stack(norms)
    ratios = torch.stack([losses[t].detach() / initial[t] for t in losses])
    target = norms.mean() * (ratios / ratios.mean()) ** alpha
    new = torch.tensor([weights[t] for t in losses], device=norms.device) * (target / norms)
    new = new / new.sum() * len(losses)
    return {t: float(w) for t, w in zip(losses, new)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--rebalance-every", type=int, default=100)
    args = ap.parse_args()
    device = torch.device("cuda")
    from nyu_data import NYUv2  # local module
    loader = DataLoader(NYUv2("data/nyuv2", split="train"), batch_size=8, shuffle=True, num_workers=8,
                        drop_last=True)

    model = MultiTaskNet().to(device)
    warmup_heads(model, loader, device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    weights = dict(TASKS)
    shared = model.encoder[-1][-1].conv3.weight
    initial = None

    for epoch in range(args.epochs):
        model.train()
        epoch_seg = 0.0
        for step, batch in enumerate(loader):
            batch = {k: v.to(device) for k, v in batch.items()}
            out = model(batch["image"])
            losses = {t: task_loss(t, out[t], batch) for t in TASKS}
            if initial is None:
                initial = {t: l.item() for t, l in losses.items()}
            if step % args.rebalance_every == 0:
                weights = gradnorm_weights(losses, shared, weights, initial=initial)

            loss_terms = []
            for t in TASKS:
                loss_terms.append(weights[t] * losses[t])
            total = sum(loss_terms)

            opt.zero_grad()
            total.backward(retain_graph=True)  # expect: OOM107
            opt.step()
            epoch_seg += losses["seg"]  # expect: OOM102
            if step % 50 == 0:
                print(f"ep {epoch} it {step} " + " ".join(f"{t}={losses[t].item():.3f}" for t in TASKS)
                      + " | w " + " ".join(f"{t}={w:.2f}" for t, w in weights.items()))
        print(f"epoch {epoch}: mean seg loss {epoch_seg.item() / len(loader):.4f}")
        torch.save(model.state_dict(), f"mtl_ep{epoch}.pt")


if __name__ == "__main__":
    main()
