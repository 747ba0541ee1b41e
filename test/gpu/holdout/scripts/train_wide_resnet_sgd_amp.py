import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models import wide_resnet50_2


class Places(Dataset):
    """Places365 crops (random)."""

    def __init__(self, n, size=224, classes=365):
        self.n, self.size, self.classes = n, size, classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(self.classes, ()).item()


def main():
    batch_size = 64
    max_steps = 5
    log_every = 1
    device = torch.device("cuda")

    model = wide_resnet50_2(weights=None, num_classes=365).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)   # no momentum
    criterion = nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 10)

    loader = DataLoader(Places(batch_size * (max_steps + 1)), batch_size=batch_size, shuffle=True)
    model.train()
    for step, (x, y) in enumerate(loader):
        if step >= max_steps:
            break
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            logits = model(x)
            loss = criterion(logits, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % log_every == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
