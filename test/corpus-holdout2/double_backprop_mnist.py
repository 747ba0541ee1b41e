"""Double backpropagation (Drucker & LeCun, 1992): penalise the input gradient of the loss
to make the classifier smoother / more robust. Trains for a fixed number of steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms

config = dict(batch_size=128, lr=1e-3, lam=0.05, max_steps=20_000, log_every=200)

device = torch.device("cuda:0")
train_loader = torch.utils.data.DataLoader(
    datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor()),
    batch_size=config["batch_size"], shuffle=True, num_workers=2, pin_memory=True,
)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return F.log_softmax(self.classifier(self.features(x)), dim=1)


model = ConvNet().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])

step = 0
while step < config["max_steps"]:
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        data.requires_grad_(True)
        optimizer.zero_grad()
        output = model(data)
        ce = F.nll_loss(output, target)
        ce.backward(create_graph=True)  # expect: OOM116
        input_grad_penalty = data.grad.pow(2).sum(dim=(1, 2, 3)).mean()
        optimizer.zero_grad()
        loss = ce + config["lam"] * input_grad_penalty
        loss.backward()
        optimizer.step()
        step += 1
        if step % config["log_every"] == 0:
            print(f"step {step}: ce={ce.item():.4f} penalty={input_grad_penalty.item():.5f}")
        if step >= config["max_steps"]:
            break

torch.save(model.state_dict(), "double_backprop_mnist.pt")
