"""VGG-style CNN trained in pure fp16 (model.half(), fp16 inputs), PyTorch-tutorial loop style.

conv_block() helper returning nn.Sequential, GroupNorm, SGD with momentum, a per-epoch
MultiStepLR (stepped once per epoch, not per batch), `for i, data in enumerate(trainloader, 0)`
with tutorial-style running-loss printing every 3 mini-batches. Loss is computed in fp32.
"""
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, TensorDataset

# ---------------------------------------------------------------------------
# Measurement for the held-out harness (not part of the training recipe):
# counts real optimizer updates and prints one RESULT line at the end.
# ---------------------------------------------------------------------------
_T0 = time.time()
_N_UPDATES = 0


def _count_update(optimizer, args, kwargs):
    global _N_UPDATES
    _N_UPDATES += 1


register_optimizer_step_post_hook(_count_update)


def _snapshot(model):
    return [p.detach().to("cpu", copy=True) for p in model.parameters()]


def _emit_result(model, optimizer, loss, init_params, eval_fn, log_at, scheduler=None, counter=None):
    peak = torch.cuda.max_memory_allocated()
    eval_loss = float(eval_fn())
    checksum, delta_sq = 0.0, 0.0
    with torch.no_grad():
        for p, p0 in zip(model.parameters(), init_params):
            pd = p.detach().double()
            checksum += pd.sum().item()
            delta_sq += (pd - p0.to(device=p.device, dtype=torch.float64)).pow(2).sum().item()
    loss_val = float(loss.detach().float().item()) if torch.is_tensor(loss) else float(loss)
    print("RESULT " + json.dumps({
        "script": os.path.basename(__file__),
        "loss": loss_val,
        "eval_loss": eval_loss,
        "opt_steps": _N_UPDATES,
        "counter": counter,
        "sched_steps": getattr(scheduler, "last_epoch", None),
        "lr": float(optimizer.param_groups[0]["lr"]),
        "param_checksum": checksum,
        "param_delta": math.sqrt(delta_sq),
        "log_at": list(log_at),
        "max_memory_allocated": int(peak),
        "param_dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
        "finite": bool(math.isfinite(loss_val) and math.isfinite(eval_loss)),
        "elapsed_s": round(time.time() - _T0, 2),
    }), flush=True)


# ---------------------------------------------------------------------------
# Training recipe
# ---------------------------------------------------------------------------
torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True


def conv_block(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, kernel_size=3, padding=1, bias=False),
        nn.GroupNorm(8, c_out),
        nn.ReLU(inplace=True),
    )


class Net(nn.Module):
    def __init__(self, num_classes=10, widths=(64, 128, 256, 512)):
        super().__init__()
        stages = []
        c = 3
        for w in widths:
            stages += [conv_block(c, w), conv_block(w, w), nn.MaxPool2d(2)]
            c = w
        self.features = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)


def main():
    torch.manual_seed(0)
    device = torch.device("cuda:0")
    batch_size = 160
    epochs = 2

    g = torch.Generator().manual_seed(5)
    n = 6 * batch_size
    images = torch.randn(n, 3, 112, 112, generator=g).half()
    labels = torch.randint(0, 10, (n,), generator=g)
    val_images = torch.randn(64, 3, 112, 112, generator=g).half()
    val_labels = torch.randint(0, 10, (64,), generator=g)
    trainloader = DataLoader(TensorDataset(images, labels), batch_size=batch_size // 4, shuffle=False)

    net = Net().to(device).half()
    init_params = _snapshot(net)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.02, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1], gamma=0.5)

    @torch.no_grad()
    def evaluate():
        net.eval()
        out = net(val_images.to(device))
        net.train()
        return F.cross_entropy(out.float(), val_labels.to(device)).item()

    log_at = []
    accumulation_steps = 4  # effective batch size: 40 x 4 = 160 samples per optimizer step
    for epoch in range(epochs):
        running_loss = 0.0
        micro_step = 0
        for micro_index, data in enumerate(trainloader, 0):
            i = micro_index // accumulation_steps  # the optimizer step this micro-batch belongs to
            inputs, labels = data[0].to(device), data[1].to(device)

            if micro_step % accumulation_steps == 0:
                optimizer.zero_grad()

            outputs = net(inputs)
            loss = criterion(outputs.float(), labels)
            (loss / accumulation_steps).backward()
            micro_step += 1
            if micro_step % accumulation_steps == 0:
                optimizer.step()

            running_loss += loss.item()
            if micro_step % accumulation_steps == 0:
                if i % 3 == 2:
                    print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 3:.3f}")
                    running_loss = 0.0
                    log_at.append(_N_UPDATES)
        if micro_step % accumulation_steps != 0:
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
            optimizer.step()
            if i % 3 == 2:
                print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 3:.3f}")
                running_loss = 0.0
                log_at.append(_N_UPDATES)
        scheduler.step()

    print("Finished Training")
    _emit_result(net, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler)


if __name__ == "__main__":
    main()
