"""What five patterns keep for backward (helper under12, issue #13). Own small models, not held-out scripts.

Each row: a fresh base (peak stats reset after the inputs exist); kept_mib = allocated after forward minus base (what
backward will read, the loss included), fwd_peak_over_mib, bwd_peak_over_mib = peak during backward over the base.
  gather_*      y = (x * 2).gather(1, idx) with x (B, V) requiring grad: does gather keep its (B, V) input?
                and `.scatter_add(1, idx, src)` out of place before it (a copy distribution over an extended vocab).
  focal_*       a sigmoid focal loss (clamp, log, pow, masks) over (B, 80, 128, 128) logits made in bf16 and cast
                `.float()` in the loss, as CenterNet-style heatmap losses do.
  droppath_*    timm vit_small_patch16_224 / twins_svt_small, bf16 autocast, batch 32, drop_path_rate 0 vs 0.2.
  res2_*        a stack of 3 SE-Res2Net 1-D blocks (C=1024, T=301, dilations 2,3,4, scale 8) under fp16 autocast,
                batch 64; asp_* an attentive statistics pooling (softmax over time, x*w, x**2*w) on (B, 1536, 301).
  complex_*     an S4D kernel K = exp((-exp(a) + 1j * b)[..., None] * arange(L)) (H=256, N/2=32, L=4096) and
                einsum with C complex: kept over base.
python probe_under12.py   (one JSON line per row; well under 60 s on an H200.)
"""
import gc, json, math, time
import torch
import torch.nn as nn
import torch.nn.functional as F

MIB = 2 ** 20
dev = "cuda"
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
T0 = time.time()


def mib(n):
    return round(n / MIB, 2)


def measure(name, make, forward, extra=None):
    gc.collect(); torch.cuda.empty_cache()
    inputs = make()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = forward(*inputs)
    torch.cuda.synchronize()
    kept = torch.cuda.memory_allocated() - base
    fwd_peak = torch.cuda.max_memory_allocated() - base
    torch.cuda.reset_peak_memory_stats()
    out.backward()
    torch.cuda.synchronize()
    bwd = torch.cuda.max_memory_allocated() - base
    row = {"row": name, "kept_mib": mib(kept), "fwd_peak_over_mib": mib(fwd_peak), "bwd_peak_over_mib": mib(bwd), "t": round(time.time() - T0, 1)}
    row.update(extra or {})
    print(json.dumps(row), flush=True)
    del inputs, out


def safe(name, fn):
    try:
        fn()
    except Exception as e:  # one row failing must not lose the others
        print(json.dumps({"row": name, "error": repr(e)[:300]}), flush=True)


# ---- gather / scatter_add over a (B, V) distribution ------------------------------------------------------------
B, V = 256, 50000
def g_make():
    return (torch.randn(B, V, device=dev, requires_grad=True), torch.randint(0, V, (B, 1), device=dev))
safe("gather", lambda: measure("gather", g_make, lambda x, i: (x * 2).gather(1, i).sum(), {"bv_mib": mib(B * V * 4)}))
safe("gather_only_sum", lambda: measure("gather_only_sum", g_make, lambda x, i: (x * 2).sum(), {"bv_mib": mib(B * V * 4)}))
def g_scatter(x, i):
    src = torch.rand(B, 400, device=dev, requires_grad=True)
    ids = torch.randint(0, V, (B, 400), device=dev)
    final = (x * 2).scatter_add(1, ids, src)
    return final.gather(1, i).sum()
safe("scatter_add_gather", lambda: measure("scatter_add_gather", g_make, g_scatter, {"bv_mib": mib(B * V * 4)}))
def g_softmax_chain(x, i):
    p = torch.sigmoid(x[:, :1])
    d = F.softmax(x, dim=1)
    d = torch.cat([p * d, torch.zeros(B, 50, device=dev)], 1)
    return torch.log(d.gather(1, i) + 1e-12).sum()
safe("softmax_mix_gather", lambda: measure("softmax_mix_gather", g_make, g_softmax_chain, {"bv_mib": mib(B * V * 4)}))

# ---- focal loss over heatmap logits ---------------------------------------------------------------------------------
def focal(pred_logits, gt):
    pred = torch.clamp(torch.sigmoid(pred_logits.float()), 1e-4, 1 - 1e-4)
    pos = gt.eq(1).float()
    neg = 1 - pos
    neg_weights = torch.pow(1 - gt, 4)
    pos_loss = torch.log(pred) * torch.pow(1 - pred, 2) * pos
    neg_loss = torch.log(1 - pred) * torch.pow(pred, 2) * neg_weights * neg
    return -(pos_loss.sum() + neg_loss.sum()) / torch.clamp(pos.sum(), min=1.0)
def f_make():
    w = torch.randn(80, 64, 1, 1, device=dev, requires_grad=True)
    return (torch.randn(16, 64, 128, 128, device=dev, dtype=torch.bfloat16), w, torch.rand(16, 80, 128, 128, device=dev).pow(8))
def f_fwd(feat, w, gt):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = F.conv2d(feat, w)
    return focal(logits, gt)
safe("focal_b16", lambda: measure("focal_b16", f_make, f_fwd, {"map_fp32_mib": mib(16 * 80 * 128 * 128 * 4)}))

# ---- timm drop path ---------------------------------------------------------------------------------------------
try:
    import timm
    for name in ("vit_small_patch16_224", "twins_svt_small"):
        for rate in (0.0, 0.2):
            def run(name=name, rate=rate):
                m = timm.create_model(name, pretrained=False, num_classes=37, drop_path_rate=rate).to(dev).train()
                def fwd(x, y):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        return F.cross_entropy(m(x), y)
                measure(f"droppath_{name}_{rate}", lambda: (torch.randn(32, 3, 224, 224, device=dev), torch.randint(0, 37, (32,), device=dev)), fwd)
                del m
            safe(f"droppath_{name}_{rate}", run)
except ImportError as e:
    print(json.dumps({"row": "droppath", "error": repr(e)}))

# ---- SE-Res2Net 1-D blocks, dilated, fp16 autocast --------------------------------------------------------------
class SE(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.se = nn.Sequential(nn.AdaptiveAvgPool1d(1), nn.Conv1d(c, 128, 1), nn.ReLU(), nn.Conv1d(128, c, 1), nn.Sigmoid())
    def forward(self, x):
        return x * self.se(x)
class Res2(nn.Module):
    def __init__(self, c, dil, scale=8):
        super().__init__()
        w = c // scale
        self.w, self.n = w, scale - 1
        self.c1, self.b1 = nn.Conv1d(c, c, 1), nn.BatchNorm1d(c)
        self.cs = nn.ModuleList([nn.Conv1d(w, w, 3, dilation=dil, padding=dil) for _ in range(self.n)])
        self.bs = nn.ModuleList([nn.BatchNorm1d(w) for _ in range(self.n)])
        self.c3, self.b3 = nn.Conv1d(c, c, 1), nn.BatchNorm1d(c)
        self.se = SE(c)
    def forward(self, x):
        out = self.b1(F.relu(self.c1(x)))
        sp = torch.split(out, self.w, 1)
        outs = []
        for i in range(self.n):
            s = sp[i] if i == 0 else s + sp[i]
            s = self.bs[i](F.relu(self.cs[i](s)))
            outs.append(s)
        outs.append(sp[self.n])
        return self.se(self.b3(F.relu(self.c3(torch.cat(outs, 1))))) + x
for nblocks in (1, 3):
    def run(nblocks=nblocks):
        m = nn.Sequential(*[Res2(1024, d) for d in (2, 3, 4)[:nblocks]]).to(dev).train()
        def fwd(x):
            with torch.autocast("cuda", dtype=torch.float16):
                return m(x).float().square().mean()
        measure(f"res2_{nblocks}blocks_b64", lambda: (torch.randn(64, 1024, 301, device=dev),), fwd, {"ct_fp16_mib": mib(64 * 1024 * 301 * 2)})
        del m
    safe(f"res2_{nblocks}", run)
def asp_run():
    att = nn.Sequential(nn.Conv1d(4608, 256, 1), nn.ReLU(), nn.BatchNorm1d(256), nn.Tanh(), nn.Conv1d(256, 1536, 1), nn.Softmax(dim=2)).to(dev)
    def fwd(x):
        with torch.autocast("cuda", dtype=torch.float16):
            x = F.relu(x)
            t = x.size(-1)
            g = torch.cat((x, torch.mean(x, dim=2, keepdim=True).repeat(1, 1, t), torch.sqrt(torch.var(x, dim=2, keepdim=True).clamp(min=1e-4)).repeat(1, 1, t)), dim=1)
            w = att(g)
            mu = torch.sum(x * w, dim=2)
            sg = torch.sqrt((torch.sum((x ** 2) * w, dim=2) - mu ** 2).clamp(min=1e-4))
            return torch.cat((mu, sg), 1).float().square().mean()
    measure("asp_b64", lambda: (torch.randn(64, 1536, 301, device=dev, dtype=torch.float16, requires_grad=True),), fwd, {"x_fp16_mib": mib(64 * 1536 * 301 * 2)})
safe("asp_b64", asp_run)

# ---- complex literal arithmetic (S4D-style kernel) --------------------------------------------------------------
def c_make():
    H, N2 = 256, 32
    return (torch.randn(H, N2, device=dev, requires_grad=True), (math.pi * torch.arange(N2, device=dev).float().repeat(H, 1)).requires_grad_(),
            torch.randn(H, N2, 2, device=dev, requires_grad=True))
def c_fwd(a, b, c):
    A = -torch.exp(a) + 1j * b
    K = A.unsqueeze(-1) * 0.001 * torch.arange(4096, device=dev)
    return (2 * torch.einsum("hn,hnl->hl", torch.view_as_complex(c), torch.exp(K)).real).square().mean()
safe("complex_kernel", lambda: measure("complex_kernel", c_make, c_fwd, {"hnl_complex64_mib": mib(256 * 32 * 4096 * 8)}))
print(json.dumps({"row": "done", "t": round(time.time() - T0, 1)}), flush=True)
