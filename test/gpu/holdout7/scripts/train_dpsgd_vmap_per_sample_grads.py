"""DP-SGD by hand with torch.func: per-sample gradients via vmap(grad(...)), per-sample clipping,
Gaussian noise, then a plain SGD step.

CIFAR-sized inputs (32x32) through a GroupNorm CNN (~2.2M params); 512 examples per step, so the
per-sample gradient tensors are 512 x params.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap
from torch.utils.data import DataLoader, TensorDataset

BATCH = 512
CLIP = 1.0
NOISE_MULT = 1.1
LR = 0.5
STEPS = 4


def conv_gn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(16, cout), nn.Tanh())


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            conv_gn(3, 64), conv_gn(64, 64), nn.AvgPool2d(2),
            conv_gn(64, 128), conv_gn(128, 128), nn.AvgPool2d(2),
            conv_gn(128, 256), conv_gn(256, 256), nn.AvgPool2d(2),
        )
        self.fc1 = nn.Linear(256 * 4 * 4, 256)
        self.fc2 = nn.Linear(256, num_classes)

    def forward(self, x):
        x = self.features(x).flatten(1)
        return self.fc2(torch.tanh(self.fc1(x)))


device = "cuda"
model = Net().to(device)
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}
print("params:", sum(v.numel() for v in params.values()))


def loss_one(p, b, x, y):
    out = functional_call(model, (p, b), (x.unsqueeze(0),))
    return F.cross_entropy(out, y.unsqueeze(0))


per_sample_grad = vmap(grad(loss_one), in_dims=(None, None, 0, 0))

opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.0)
data = TensorDataset(torch.randn(BATCH * STEPS, 3, 32, 32), torch.randint(0, 10, (BATCH * STEPS,)))
loader = DataLoader(data, batch_size=BATCH, shuffle=True)

for step, (x, y) in enumerate(loader):
    x, y = x.to(device), y.to(device)
    grads = per_sample_grad(params, buffers, x, y)            # dict name -> (B, *shape)
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()], dim=1).norm(dim=1)
    factor = (CLIP / (norms + 1e-6)).clamp(max=1.0)
    for name, p in model.named_parameters():
        g = grads[name]
        clipped = (g * factor.view(-1, *([1] * (g.dim() - 1)))).sum(0)
        noise = torch.randn_like(clipped) * NOISE_MULT * CLIP
        p.grad = (clipped + noise) / x.shape[0]
    opt.step()
    opt.zero_grad(set_to_none=True)
    with torch.no_grad():
        loss = F.cross_entropy(model(x), y)
    print(f"step {step} loss {loss.item():.3f} median per-sample norm {norms.median().item():.3f}")
