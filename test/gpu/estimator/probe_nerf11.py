# What a forward holds while its own locals keep temporaries alive (int64 index arithmetic, a gather from a learned
# table) and what a segment-recurrent transformer holds once it attends over a carried memory (NVIDIA H200, torch 2.11).
# Per configuration: the peak of the forward, of the backward and of the whole step, each measured from a reset, with
# memory at the forward's start, after it and after backward. The "expect" fields are hand counts written beside each
# case, in MiB, for comparison only.
# python probe_nerf11.py > results/probe_nerf11.json
import json, math, time, torch
import torch.nn as nn
import torch.nn.functional as F

MIB = 2**20
dev = "cuda"
def mib(x): return round(x / MIB, 1)
def sync(): torch.cuda.synchronize()
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
out = {"torch": torch.__version__, "runs": []}


def phases(label, model, make_inputs, loss_of, steps=2, extra=None):
    """Runs `steps` train steps; records the last step's forward/backward/step peaks."""
    rec = {"label": label, **(extra or {})}
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    state = {}
    for s in range(steps):
        inputs = make_inputs(state)
        sync(); torch.cuda.reset_peak_memory_stats(); start = torch.cuda.memory_allocated()
        result = model(*inputs)
        loss = loss_of(result, state)
        sync(); fwd_peak = torch.cuda.max_memory_allocated(); after_fwd = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        loss.backward()
        sync(); bwd_peak = torch.cuda.max_memory_allocated(); after_bwd = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        opt.step(); opt.zero_grad(set_to_none=True)
        sync(); step_peak = torch.cuda.max_memory_allocated()
        del result, loss
        rec[f"step{s}"] = {"start": mib(start), "forward_peak": mib(fwd_peak), "after_forward": mib(after_fwd),
                           "backward_peak": mib(bwd_peak), "after_backward": mib(after_bwd), "opt_peak": mib(step_peak),
                           "forward_over_start": mib(fwd_peak - start), "kept": mib(after_fwd - start)}
    rec["params"] = sum(p.numel() for p in model.parameters())
    del opt
    return rec


# --- 1. Hash-grid encoding whose forward keeps int64 temporaries in locals ---------------------------------------
class Grid(nn.Module):
    def __init__(self, levels=8, log2_t=18, f=2, free_locals=False, no_table_grad=False):
        super().__init__()
        self.levels, self.t, self.free_locals = levels, 2 ** log2_t, free_locals
        self.table = nn.Parameter(torch.zeros(levels, self.t, f).uniform_(-1e-4, 1e-4), requires_grad=not no_table_grad)
        self.register_buffer("res", torch.tensor([16 * 2 ** l for l in range(levels)]), persistent=False)
        self.register_buffer("corner", torch.tensor([[(c >> 2) & 1, (c >> 1) & 1, c & 1] for c in range(8)]), persistent=False)
        self.register_buffer("prime", torch.tensor([1, 2654435761, 805459861]), persistent=False)
        self.head = nn.Linear(levels * f, 1)

    def forward(self, x):
        n = x.size(0)
        s = x[:, None, :] * self.res[None, :, None]          # (n, L, 3) fp32
        b = s.floor().long()                                  # (n, L, 3) int64
        fr = s - b                                            # (n, L, 3) fp32
        corners = b[:, :, None, :] + self.corner              # (n, L, 8, 3) int64
        parts = (corners * self.prime).unbind(-1)             # three views of an (n, L, 8, 3) int64
        key = (parts[0] ^ parts[1] ^ parts[2]) % self.t       # (n, L, 8) int64
        if self.free_locals:
            del corners, parts
        lv = torch.arange(self.levels, device=x.device)[None, :, None]
        g = self.table[lv, key]                               # (n, L, 8, f)
        c = self.corner.float()
        w = (c * fr[:, :, None, :] + (1 - c) * (1 - fr[:, :, None, :])).prod(-1)   # (n, L, 8)
        return self.head((w.unsqueeze(-1) * g).sum(2).reshape(n, -1))


def grid_case(label, n, **kw):
    torch.cuda.empty_cache()
    model = Grid(**kw).to(dev)
    L = model.levels
    e = n * L  # elements of an (n, L) grid
    # hand count of the forward's peak over its start, fp32 4 B, int64 8 B: at `w`'s sum, s, b, fr, corners,
    # key, g alive (parts freed by then only with free_locals), plus c*fr, (1-c)*(1-fr) and their sum alive
    locals_ = e * 3 * 4 + e * 3 * 8 + e * 3 * 4 + e * 24 * 8 + e * 8 * 8 + e * 8 * 2 * 4
    if not kw.get("free_locals"): locals_ += e * 24 * 8
    expect = (locals_ + 3 * e * 24 * 4) / MIB
    return phases(label, model, lambda st: (torch.rand(n, 3, device=dev),), lambda y, st: y.square().mean(),
                  extra={"n": n, "levels": L, "expect_forward_over_start": round(expect, 1), **kw})


# --- 2. Segment-recurrent LM that attends over the previous segment's states --------------------------------------
class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.q, self.kv, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, 2 * d, bias=False), nn.Linear(d, d, bias=False)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mem):
        B, T, D = x.shape
        ctx = torch.cat([mem, x], 1) if mem is not None else x
        S = ctx.size(1)
        q = self.q(x).view(B, T, self.h, -1).transpose(1, 2)
        k, v = self.kv(ctx).view(B, S, 2, self.h, -1).permute(2, 0, 3, 1, 4)
        mask = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = self.n1(x + self.o(a.transpose(1, 2).reshape(B, T, D)))
        return self.n2(x + self.ff(x))


class SegLM(nn.Module):
    def __init__(self, vocab, d, h, layers, mem_len):
        super().__init__()
        self.mem_len = mem_len
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens, mems):
        x = self.emb(tokens)
        states = []
        for blk, m in zip(self.blocks, mems):
            states.append(x)
            x = blk(x, m)
        with torch.no_grad():
            mems = [torch.cat([m, s], 1)[:, -self.mem_len:].detach() if m is not None else s.detach() for m, s in zip(mems, states)]
        return self.out(x), mems


def seg_case(label, B=8, T=512, mem_len=512, d=768, h=12, layers=6, vocab=16000, amp=False, steps=3, carry=True):
    torch.cuda.empty_cache()
    model = SegLM(vocab, d, h, layers, mem_len).to(dev)
    stream = torch.randint(0, vocab, (B, T * steps + 1), device=dev)
    def make(st):
        st.setdefault("mems", [None] * layers); st.setdefault("seg", 0)
        i = st["seg"]; st["seg"] += 1
        st["tgt"] = stream[:, i * T + 1:(i + 1) * T + 1]
        return (stream[:, i * T:(i + 1) * T], st["mems"])

    def loss_of(result, st):
        logits, mems = result
        if carry: st["mems"] = mems
        return F.cross_entropy(logits.float().reshape(-1, vocab), st["tgt"].reshape(-1))

    class Wrapped(nn.Module):
        def __init__(self, m):
            super().__init__(); self.m = m
        def forward(self, *a):
            if amp:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    return self.m(*a)
            return self.m(*a)

    rec = phases(label, Wrapped(model), make, loss_of, steps=steps,
                 extra={"B": B, "T": T, "mem_len": mem_len, "carry": carry, "d": d, "layers": layers, "vocab": vocab, "amp": amp})
    rec["mem_mib_each_layer_fp32"] = mib(B * mem_len * d * 4)
    return rec


cases = [
    lambda: grid_case("grid_locals_kept", 1 << 19),
    lambda: grid_case("grid_locals_freed", 1 << 19, free_locals=True),
    lambda: grid_case("grid_table_frozen", 1 << 19, no_table_grad=True),
    lambda: seg_case("seg_fp32"),
    lambda: seg_case("seg_fp32_nomem", carry=False),
    lambda: seg_case("seg_bf16", amp=True),
    lambda: seg_case("seg_bf16_nomem", amp=True, carry=False),
]
for make_case in cases:
    t0 = time.time()
    try:
        rec = make_case()
    except Exception as e:  # noqa: BLE001
        rec = {"error": repr(e)[:300]}
    rec["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(rec), flush=True)
    out["runs"].append(rec)
    torch.cuda.empty_cache()
print(json.dumps(out))
