# A checkpointed block of running sums over outer products (cumsum of einsum "bld,ble->blde"), as in
# test/estimator/checkpoint-block-backward.test.ts, at a few sizes, fp32 and bf16 autocast: the step's peak over what
# persists (weights, gradients, AdamW states), in units of one (batch, length, width, width) fp32 tensor. The estimator
# says about 4 (cumsum's backward: the gradient and three buffers of its size at once), plus small terms.
# python probe_ckpt9.py   (prints one JSON line per configuration; well under 200 s on an H200)
import json, time
import torch, torch.nn as nn
from torch.utils.checkpoint import checkpoint

MIB = 2 ** 20
dev = "cuda"


class PrefixMemory(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.keys = nn.Linear(width, width)
        self.values = nn.Linear(width, width)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        k = torch.sigmoid(self.keys(x))
        v = self.values(x)
        memory = torch.einsum("bld,ble->blde", k, v).cumsum(dim=1)
        read = torch.einsum("bld,blde->ble", k, memory)
        return x + self.out(read)


class Net(nn.Module):
    def __init__(self, width, depth, ckpt):
        super().__init__()
        self.ckpt = ckpt
        self.blocks = nn.ModuleList([PrefixMemory(width) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.ckpt else block(x)
        return x


def run(batch, length, width, amp, ckpt, depth=4, steps=3):
    torch.cuda.empty_cache(); torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    net = Net(width, depth, ckpt).to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    for _ in range(steps):
        x = torch.randn(batch, length, width, device=dev)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = net(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    params = sum(p.numel() for p in net.parameters())
    persistent = params * 4 * 4  # weights, gradients, AdamW's two states, fp32
    memory = batch * length * width * width * 4
    rec = {"batch": batch, "length": length, "width": width, "amp": amp, "ckpt": ckpt, "peak_mib": round(peak / MIB, 1),
           "persistent_mib": round(persistent / MIB, 1), "memory_mib": round(memory / MIB, 1),
           "over_persistent_in_memories": round((peak - persistent) / memory, 3), "s": round(time.time() - t0, 1)}
    print(json.dumps(rec), flush=True)
    del net, opt


_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
for amp in (False, True):
    for ckpt in (True, False):
        run(8, 1024, 128, amp, ckpt)
    run(4, 512, 256, amp, True)
    run(16, 256, 64, amp, True)
