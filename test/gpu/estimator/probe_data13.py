"""probe_data13: nn.MultiheadAttention (need_weights default True, bool causal attn_mask, dropout) in checkpointed
blocks under bf16 autocast; one block alone, plain and checkpointed; need_weights=False for comparison.
Prints JSON lines of peak memory (bytes)."""
import json
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

dev = "cuda"


class Block(nn.Module):
    def __init__(self, d, h, dropout, need_weights):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, dropout=dropout, batch_first=True)
        self.need_weights = need_weights

    def forward(self, x, mask):
        h = self.ln(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=self.need_weights)
        return x + a


def run(name, B, T, d, h, n, dropout, need_weights, ckpt, amp):
    torch.cuda.empty_cache()
    blocks = nn.ModuleList([Block(d, h, dropout, need_weights) for _ in range(n)]).to(dev)
    x0 = torch.randn(B, T, d, device=dev, requires_grad=True)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=dev), diagonal=1)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        x = x0
        for b in blocks:
            x = checkpoint(b, x, mask, use_reentrant=False) if ckpt else b(x, mask)
        loss = x.float().pow(2).mean()
    fwd = torch.cuda.max_memory_allocated() - base
    after_fwd = torch.cuda.memory_allocated() - base
    loss.backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    print(json.dumps(dict(name=name, B=B, T=T, d=d, h=h, n=n, dropout=dropout, need_weights=need_weights, ckpt=ckpt,
                          amp=amp, forward_peak=fwd, after_forward=after_fwd, peak=peak,
                          bhtt_fp32=B * h * T * T * 4)), flush=True)
    del blocks, x0, x, loss


for amp in (True, False):
    for ckpt in (False, True):
        for nw in (True, False):
            run("mha", 4, 1024, 512, 8, 3, 0.1, nw, ckpt, amp)
run("mha_nodrop", 4, 1024, 512, 8, 3, 0.0, True, True, True)
run("mha_nodrop", 4, 1024, 512, 8, 3, 0.0, True, False, True)
