"""What a torch.compile'd (inductor) GPT-style block keeps for backward, against eager, in fp32 with TF32 matmuls.

For n_layer 1 and 3 (the difference is one block's), eager and compiled, loss computed inside forward (and, for one
layer compiled, outside it): memory allocated after forward over before (what forward keeps), the forward's peak and
backward's peak over the allocation before forward. Batch 8 x 1024 tokens, d 768, 12 heads, vocab 8192.
"""
import json, os, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_float32_matmul_precision("high")
B, T, D, H, V = 8, 1024, 768, 12, 8192
MIB = 2 ** 20


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q = q.view(b, t, H, c // H).transpose(1, 2)
        k = k.view(b, t, H, c // H).transpose(1, 2)
        v = v.view(b, t, H, c // H).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = SelfAttention()
        self.ln2 = nn.LayerNorm(D)
        self.ff = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ff(self.ln2(x))


class LM(nn.Module):
    def __init__(self, layers, loss_inside):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(T, D)
        self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, V, bias=False)
        self.loss_inside = loss_inside

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        logits = self.head(self.ln_f(self.blocks(x)))
        if self.loss_inside:
            return F.cross_entropy(logits.view(-1, V), targets.view(-1))
        return logits


def measure(layers, compiled, loss_inside):
    torch.manual_seed(0)
    model = LM(layers, loss_inside).cuda()
    run = torch.compile(model) if compiled else model
    idx = torch.randint(0, V, (B, T), device="cuda")
    tgt = torch.randint(0, V, (B, T), device="cuda")

    def loss_of():
        out = run(idx, tgt)
        return out if loss_inside else F.cross_entropy(out.view(-1, V), tgt.view(-1))

    t0 = time.time()
    for _ in range(2):
        model.zero_grad(set_to_none=True)
        loss_of().backward()
    torch.cuda.synchronize()
    warm = time.time() - t0
    model.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    m0 = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss = loss_of()
    torch.cuda.synchronize()
    m1 = torch.cuda.memory_allocated()
    fwd_peak = torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss.backward()
    torch.cuda.synchronize()
    bwd_peak = torch.cuda.max_memory_allocated()
    m2 = torch.cuda.memory_allocated()
    params = sum(p.numel() for p in model.parameters())
    row = dict(layers=layers, compiled=compiled, loss_inside=loss_inside, params=params, warm_s=round(warm, 1),
               kept_mib=(m1 - m0) / MIB, fwd_peak_over_mib=(fwd_peak - m0) / MIB, bwd_peak_over_mib=(bwd_peak - m0) / MIB,
               after_bwd_over_mib=(m2 - m0) / MIB, grads_mib=params * 4 / MIB)
    print(json.dumps(row), flush=True)
    del model, run, loss
    torch.cuda.empty_cache()
    return row


rows = []
for layers, compiled, inside in [(1, False, True), (3, False, True), (1, False, False), (1, True, True), (3, True, True), (1, True, False)]:
    rows.append(measure(layers, compiled, inside))
out = os.environ.get("OUT", ".")
json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "B": B, "T": T, "D": D, "V": V, "rows": rows},
          open(os.path.join(out, "compile_saved.json"), "w"), indent=1)
