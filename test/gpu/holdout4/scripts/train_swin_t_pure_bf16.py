"""torchvision Swin-T fine-tuned in pure bf16 (the whole model cast with .to(torch.bfloat16); no autocast, no
fp32 master weights) at 256 px; torchvision's shifted-window attention pads the 64x64 token grid to the window."""
import torch
import torch.nn as nn
import torchvision.models as tvm
from torch.utils.data import DataLoader, TensorDataset


def build(model_name, num_classes):
    model = tvm.get_model(model_name, weights=None, num_classes=num_classes)
    return model


def train(model_name="swin_t", num_classes=397, batch_size=96, image_size=256, lr=5e-4, steps=4):
    device = torch.device("cuda")
    model = build(model_name, num_classes).to(device=device, dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05, eps=1e-6)
    loss_fn = nn.CrossEntropyLoss()

    x_all = torch.randn(batch_size * steps, 3, image_size, image_size)
    y_all = torch.randint(0, num_classes, (batch_size * steps,))
    loader = DataLoader(TensorDataset(x_all, y_all), batch_size=batch_size, shuffle=True)

    model.train()
    for step, (x, y) in enumerate(loader):
        x = x.to(device, dtype=torch.bfloat16, non_blocking=True)
        y = y.to(device)
        out = model(x)
        loss = loss_fn(out, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f} dtype {out.dtype}")
    print("peak %.3f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    train()
