"""Which SDPA kernel runs and what it keeps (helper twins13, issue #13). Own small models, not held-out scripts.

Each row: a fresh base (peak stats reset after the inputs exist); kept_mib = allocated after forward minus base,
fwd_peak_over_mib / bwd_peak_over_mib over the base; saved = what autograd saved (saved_tensors_hooks: unique
storages, MiB, and the distinct (shape, dtype) of the saved tensors); grad_fn = the output's grad_fn (names the kernel:
ScaledDotProduct{Flash,Efficient,Cudnn}AttentionBackward0, anything else is the math kernel's composite ops).
  sdpa_*     F.scaled_dot_product_attention on q, k, v made from one qkv tensor requiring grad, over rank (3/4/5-D),
             dtype (fp32, bf16 autocast over fp32 inputs, bf16 inputs), mask (none, bool, float, is_causal), head dim.
  twins_*    timm twins_svt_small, bf16 autocast, batch 32: kept per top-level part (forward hooks), and the whole
             with allow_fp16_bf16_reduction_math_sdp(True) (the math kernel's fp32 upcast off).
  mha_*      nn.MultiheadAttention(batch_first, need_weights=False) in fp32: cross-attention (query 2048 / keys 64
             and the reverse), keys of another width (kdim=3), self-attention; isab_* a 4-block ISAB-style stack.
  s4_*       an FFT-convolution block (rfft, product, irfft of (B, 256, 4096)) with and without non-reentrant checkpoint.
python probe_twins13.py   (one JSON line per row; well under 90 s on an H200.)
"""
import gc, json, time
import torch
import torch.nn as nn
import torch.nn.functional as F

MIB = 2 ** 20
dev = "cuda"
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
T0 = time.time()


def mib(n):
    return round(n / MIB, 2)


class SavedLog:
    def __init__(self):
        self.storages, self.kinds = {}, {}

    def pack(self, t):
        if t.is_cuda:
            try:
                st = t.untyped_storage()
                self.storages[st.data_ptr()] = st.nbytes()
            except Exception:
                pass
            key = f"{tuple(t.shape)}:{str(t.dtype).replace('torch.', '')}"
            self.kinds[key] = self.kinds.get(key, 0) + 1
        return t

    def summary(self):
        kinds = sorted(self.kinds.items(), key=lambda kv: -kv[1])[:14]
        return {"saved_mib": mib(sum(self.storages.values())), "saved_kinds": dict(kinds)}


def measure(name, make, forward, extra=None, log_saved=True):
    gc.collect(); torch.cuda.empty_cache()
    inputs = make()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    log = SavedLog()
    if log_saved:
        with torch.autograd.graph.saved_tensors_hooks(log.pack, lambda t: t):
            out = forward(*inputs)
    else:
        out = forward(*inputs)
    grad_fn = out.grad_fn.name() if out.grad_fn is not None else None
    if isinstance(out, torch.Tensor) and out.dim() > 0:
        out = out.float().square().mean()
    torch.cuda.synchronize()
    kept = torch.cuda.memory_allocated() - base
    fwd_peak = torch.cuda.max_memory_allocated() - base
    torch.cuda.reset_peak_memory_stats()
    out.backward()
    torch.cuda.synchronize()
    bwd = torch.cuda.max_memory_allocated() - base
    row = {"row": name, "grad_fn": grad_fn, "kept_mib": mib(kept), "fwd_peak_over_mib": mib(fwd_peak), "bwd_peak_over_mib": mib(bwd),
           "t": round(time.time() - T0, 1)}
    if log_saved:
        row.update(log.summary())
    row.update((extra() if callable(extra) else extra) or {})
    print(json.dumps(row), flush=True)
    del inputs, out


def safe(name, fn):
    try:
        fn()
    except Exception as e:  # one row failing must not lose the others
        print(json.dumps({"row": name, "error": repr(e)[:300]}), flush=True)


_allowed = getattr(torch.backends.cuda, "fp16_bf16_reduction_math_sdp_allowed", None)
print(json.dumps({"row": "env", "torch": torch.__version__, "device": torch.cuda.get_device_name(0),
                  "math_reduced_precision_allowed": _allowed() if _allowed else None}), flush=True)


# ---- SDPA kernel by rank, dtype, mask ---------------------------------------------------------------------------
# Twins' local attention: (B, windows, heads, 49, hd); the same as 4-D (B * windows, heads, 49, hd); 3-D (B*H, N, hd).
def sdpa_case(rank, dtype_mode, mask, hd=32, B=64, W=64, H=2, N=49):
    def make():
        qkv = torch.randn(3, B * W * H * N * hd, device=dev, dtype=torch.bfloat16 if dtype_mode == "bf16" else torch.float32,
                          requires_grad=True)
        m = None
        if mask == "bool":
            m = torch.rand(N, N, device=dev) > 0.1
        elif mask == "float":
            m = torch.randn(N, N, device=dev, dtype=torch.bfloat16 if dtype_mode != "fp32" else torch.float32)
        return qkv, m

    shape = {5: (B, W, H, N, hd), 4: (B * W, H, N, hd), 3: (B * W * H, N, hd)}[rank]

    def fwd(qkv, m):
        q, k, v = (t.view(shape) for t in qkv.unbind(0))
        kw = {"is_causal": True} if mask == "causal" else {"attn_mask": m} if m is not None else {}
        if dtype_mode == "autocast":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return F.scaled_dot_product_attention(q, k, v, **kw)
        return F.scaled_dot_product_attention(q, k, v, **kw)

    elements = B * W * H * N * hd
    measure(f"sdpa_{rank}d_{dtype_mode}_{mask}_hd{hd}", make, fwd,
            {"qkv_one_mib_fp32": mib(4 * elements), "probs_mib_fp32": mib(4 * B * W * H * N * N)})


for rank in (5, 4, 3):
    for dtype_mode in ("autocast", "fp32", "bf16"):
        safe(f"sdpa_{rank}_{dtype_mode}", lambda rank=rank, dtype_mode=dtype_mode: sdpa_case(rank, dtype_mode, "none"))
for dtype_mode in ("autocast", "fp32"):
    for mask in ("bool", "float", "causal"):
        safe(f"sdpa_4_{dtype_mode}_{mask}", lambda dtype_mode=dtype_mode, mask=mask: sdpa_case(4, dtype_mode, mask))
safe("sdpa_4_fp32_hd20", lambda: sdpa_case(4, "fp32", "none", hd=20))
safe("sdpa_4_autocast_hd20", lambda: sdpa_case(4, "autocast", "none", hd=20))
# Long keys (ISAB-like shapes): (B, 8, 2048, 32) over (B, 8, 64, 32) in fp32.
def sdpa_cross(Lq, Lk, dtype_mode):
    B, H, hd = 64, 8, 32
    def make():
        return (torch.randn(B, H, Lq, hd, device=dev, requires_grad=True), torch.randn(B, H, Lk, hd, device=dev, requires_grad=True))
    def fwd(q, kv):
        if dtype_mode == "autocast":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return F.scaled_dot_product_attention(q, kv, kv)
        return F.scaled_dot_product_attention(q, kv, kv)
    measure(f"sdpa_cross_{Lq}x{Lk}_{dtype_mode}", make, fwd, {"q_mib": mib(4 * B * H * Lq * hd), "probs_mib": mib(4 * B * H * Lq * Lk)})
for lq, lk in ((2048, 64), (64, 2048)):
    safe(f"sdpa_cross_{lq}", lambda lq=lq, lk=lk: sdpa_cross(lq, lk, "fp32"))


# ---- timm Twins-SVT-S per part ----------------------------------------------------------------------------------
def twins(batch=32, reduced_math=False):
    import timm
    m = timm.create_model("twins_svt_small", pretrained=False, num_classes=37).to(dev).train()
    parts = {}
    marks = {}
    def pre(name):
        def hook(mod, inp):
            torch.cuda.synchronize(); marks[name] = torch.cuda.memory_allocated()
        return hook
    def post(name):
        def hook(mod, inp, out):
            torch.cuda.synchronize(); parts[name] = parts.get(name, 0) + torch.cuda.memory_allocated() - marks[name]
        return hook
    for s, stage in enumerate(m.blocks):
        for b, blk in enumerate(stage):
            n = f"s{s}b{b}:{type(blk.attn).__name__}"
            blk.register_forward_pre_hook(pre(n)); blk.register_forward_hook(post(n))
    for s, pe in enumerate(m.patch_embeds):
        pe.register_forward_pre_hook(pre(f"embed{s}")); pe.register_forward_hook(post(f"embed{s}"))
    def make():
        return (torch.randn(batch, 3, 224, 224, device=dev), torch.randint(0, 37, (batch,), device=dev))
    def fwd(x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return F.cross_entropy(m(x), y)
    prev = None
    if reduced_math and hasattr(torch.backends.cuda, "allow_fp16_bf16_reduction_math_sdp"):
        prev = torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
        torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)
    try:
        measure(f"twins_b{batch}_reduced{int(reduced_math)}", make, fwd, lambda: {"parts_mib": {k: mib(v) for k, v in parts.items()}})
    finally:
        if prev is not None:
            torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(prev)

safe("twins", lambda: twins())
safe("twins_reduced", lambda: twins(reduced_math=True))


# ---- nn.MultiheadAttention, batch_first, need_weights=False, fp32 -------------------------------------------------
def mha_case(name, Lq, Lk, E=256, H=8, kdim=None, self_attn=False, B=64):
    mha = nn.MultiheadAttention(E, H, kdim=kdim, vdim=kdim, batch_first=True).to(dev)
    params = sum(p.numel() for p in mha.parameters())
    def make():
        q = torch.randn(B, Lq, E, device=dev, requires_grad=True)
        k = q if self_attn else torch.randn(B, Lk, kdim or E, device=dev, requires_grad=True)
        return q, k
    def fwd(q, k):
        return mha(q, k, k, need_weights=False)[0]
    measure(f"mha_{name}", make, fwd, {"params": params, "q_mib": mib(4 * B * Lq * E), "k_mib": mib(4 * B * Lk * (kdim or E))})

safe("mha_cross_long_q", lambda: mha_case("cross_q2048_k64", 2048, 64))
safe("mha_cross_long_k", lambda: mha_case("cross_q64_k2048", 64, 2048))
safe("mha_cross_kdim3", lambda: mha_case("cross_q64_k2048_kdim3", 64, 2048, kdim=3))
safe("mha_self", lambda: mha_case("self_2048", 2048, 2048, self_attn=True))


class Mab(nn.Module):
    def __init__(self, dq, dk, d, h):
        super().__init__()
        self.fc_q = nn.Linear(dq, d)
        self.attn = nn.MultiheadAttention(d, h, kdim=dk, vdim=dk, batch_first=True)
        self.ln0, self.ln1 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, q, k):
        q = self.fc_q(q)
        h = self.ln0(q + self.attn(q, k, k, need_weights=False)[0])
        return self.ln1(h + self.ff(h))


class Isab(nn.Module):
    def __init__(self, din, d, h, m):
        super().__init__()
        self.ind = nn.Parameter(torch.randn(1, m, d))
        self.a, self.b = Mab(d, din, d, h), Mab(din, d, d, h)

    def forward(self, x):
        return self.b(x, self.a(self.ind.expand(x.size(0), -1, -1), x))


def isab_stack(blocks, B=64, N=2048):
    layers = [Isab(3 if i == 0 else 256, 256, 8, 64) for i in range(blocks)]
    net = nn.Sequential(*layers).to(dev)
    def make():
        return (torch.randn(B, N, 3, device=dev),)
    measure(f"isab_{blocks}blocks_b{B}", make, lambda x: net(x).mean(), {"token_mib": mib(4 * B * N * 256)})

safe("isab1", lambda: isab_stack(1))
safe("isab4", lambda: isab_stack(4))


# ---- an FFT-convolution block, with and without checkpoint -------------------------------------------------------
class FftConv(nn.Module):
    def __init__(self, h=256):
        super().__init__()
        self.norm = nn.LayerNorm(h)
        self.k = nn.Parameter(torch.randn(h, 4096) * 0.01)
        self.out = nn.Sequential(nn.Conv1d(h, 2 * h, 1), nn.GLU(dim=-2))

    def forward(self, x):  # (B, L, H)
        z = self.norm(x).transpose(-1, -2)
        L = z.size(-1)
        y = torch.fft.irfft(torch.fft.rfft(z, n=2 * L) * torch.fft.rfft(self.k, n=2 * L), n=2 * L)[..., :L]
        y = F.dropout(F.gelu(y), 0.1)
        return x + F.dropout(self.out(y).transpose(-1, -2), 0.1)


def s4(ckpt, blocks=3, B=64):
    from torch.utils.checkpoint import checkpoint
    net = nn.ModuleList([FftConv() for _ in range(blocks)]).to(dev)
    def make():
        return (torch.randn(B, 4096, 256, device=dev, requires_grad=False),)
    def fwd(x):
        for blk in net:
            x = checkpoint(blk, x, use_reentrant=False) if ckpt else blk(x)
        return x.mean()
    measure(f"s4_ckpt{int(ckpt)}_{blocks}blocks_b{B}", make, fwd, {"token_mib": mib(4 * B * 4096 * 256)}, log_saved=False)

safe("s4_ckpt", lambda: s4(True))
safe("s4_plain1", lambda: s4(False, blocks=1))
print(json.dumps({"row": "done", "t": round(time.time() - T0, 1)}), flush=True)
