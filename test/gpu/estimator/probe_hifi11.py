"""What 1-D audio convolution stacks keep for backward and what their backward adds (helper hifi11, issue #13).

Per-op rows (fp32): x is a leaf that requires grad, so each op saves what it saves in the middle of a network; the
backward runs op(x).backward(g) with g allocated before the base, so the peak is the op's own backward transient plus
the gradients it makes. Columns:
  kept_mib            allocated after forward (output alive) minus before
  saved_mib           distinct storages autograd saved (x and parameters left out), seen by saved-tensor hooks
  bwd_peak_over_mib   peak during backward over the same base (includes kept, x.grad and parameter grads)
  in_mib / out_mib / weight_mib   one input, one output, one weight (all parameters of the op) in MiB
Ops: Conv1d plain, with the old torch.nn.utils.weight_norm and with parametrizations.weight_norm / spectral_norm
(called once and twice in one graph, as a discriminator is on real and generated audio); ConvTranspose1d;
AvgPool1d; leaky_relu in place and not, between two convolutions; the period reshape (B,1,T) -> (B,1,T/p,p) with
a reflect pad and a Conv2d with a (k,1) kernel; |a - b|.mean() over two feature maps (feature-matching loss).
Composite rows: a small upsampling generator and period/scale discriminators (own design, weight-norm throughout),
one GAN step with two AdamW optimizers; peak over the base of parameters + optimizer states after a warm-up step.
python probe_hifi11.py [OUT.json]   (prints one JSON line per row; well under 200 s on an H200.)
"""
import gc, json, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm as old_weight_norm
from torch.nn.utils.parametrizations import weight_norm as new_weight_norm, spectral_norm

MIB = 2 ** 20
dev = "cuda"
res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
torch.backends.cudnn.benchmark = False


def mib(n):
    return round(n / MIB, 2)


def tensor_bytes(t):
    return t.numel() * t.element_size()


def saved_storages(fn, x, params):
    """Distinct storages autograd saves while fn(x) runs, x and parameters left out."""
    skip = {x.untyped_storage().data_ptr()} | {p.untyped_storage().data_ptr() for p in params}
    seen = {}

    def pack(t):
        try:
            s = t.untyped_storage()
            ptr = s.data_ptr()
            if ptr not in skip and ptr not in seen:
                seen[ptr] = (s.nbytes(), tuple(t.shape))
        except Exception:
            pass
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(x)
    del out
    total = sum(v[0] for v in seen.values())
    biggest = sorted(seen.values(), key=lambda v: -v[0])[:6]
    return total, [[mib(b), list(s)] for b, s in biggest]


def op_row(name, make, shape, **info):
    rec = {"name": name, **info, "shape": list(shape)}
    t0 = time.time()
    try:
        gc.collect(); torch.cuda.empty_cache(); torch.cuda.synchronize()
        mod, fn = make()
        params = list(mod.parameters()) if mod is not None else []
        x = torch.randn(*shape, device=dev, requires_grad=True)
        with torch.no_grad():
            probe_out = fn(x)
        g = torch.randn_like(probe_out)
        rec["out_shape"] = list(probe_out.shape)
        rec["in_mib"], rec["out_mib"] = mib(tensor_bytes(x)), mib(tensor_bytes(probe_out))
        rec["weight_mib"] = mib(sum(tensor_bytes(p) for p in params))
        del probe_out
        saved, biggest = saved_storages(fn, x, params)
        rec["saved_mib"], rec["saved_biggest"] = mib(saved), biggest
        for p in params:
            p.grad = None
        gc.collect(); torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = fn(x)
        torch.cuda.synchronize()
        rec["kept_mib"] = mib(torch.cuda.memory_allocated() - base)
        rec["fwd_peak_over_mib"] = mib(torch.cuda.max_memory_allocated() - base)
        torch.cuda.reset_peak_memory_stats()
        out.backward(g)
        torch.cuda.synchronize()
        rec["bwd_peak_over_mib"] = mib(torch.cuda.max_memory_allocated() - base)
        del out
        rec["after_bwd_over_mib"] = mib(torch.cuda.memory_allocated() - base)
        del x, g, mod, fn, params
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 2)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)


def norm_wrap(kind, conv):
    if kind == "old_wn":
        return old_weight_norm(conv)
    if kind == "new_wn":
        return new_weight_norm(conv)
    if kind == "spectral":
        return spectral_norm(conv)
    return conv


def conv1d(kind, cin, cout, k, stride=1, dilation=1, groups=1, calls=1, pad=None):
    def make():
        pad_ = (k * dilation - dilation) // 2 if pad is None else pad
        m = norm_wrap(kind, nn.Conv1d(cin, cout, k, stride, dilation=dilation, groups=groups, padding=pad_)).to(dev)
        if calls == 1:
            return m, m
        # the same layer on two halves of the batch in one graph, as d(y) and d(y_hat)
        return m, lambda x: torch.cat([m(h) for h in x.chunk(calls)], 0)
    return make


def conv_t1d(kind, cin, cout, k, u):
    def make():
        m = norm_wrap(kind, nn.ConvTranspose1d(cin, cout, k, u, padding=(k - u) // 2)).to(dev)
        return m, m
    return make


def avgpool():
    def make():
        m = nn.AvgPool1d(4, 2, padding=2)
        return None, m
    return make


def conv_lrelu_conv(kind, c, k, inplace):
    def make():
        a = norm_wrap(kind, nn.Conv1d(c, c, k, padding=k // 2)).to(dev)
        b = norm_wrap(kind, nn.Conv1d(c, c, k, padding=k // 2)).to(dev)
        seq = nn.ModuleList([a, b])

        def fn(x):
            h = F.leaky_relu(x, 0.1)               # input of the pair: not in place (x is a leaf)
            h = a(h)
            h = F.leaky_relu(h, 0.1, inplace=inplace)
            return b(h)
        return seq, fn
    return make


def lrelu_only(inplace):
    def make():
        def fn(x):
            h = x * 1.0                            # a non-leaf to act on, as a conv output would be
            return F.leaky_relu(h, 0.1, inplace=inplace)
        return None, fn
    return make


def period_conv(kind, period, cout=32, k=5, stride=3):
    def make():
        m = norm_wrap(kind, nn.Conv2d(1, cout, (k, 1), (stride, 1), padding=((k - 1) // 2, 0))).to(dev)

        def fn(x):
            b, c, t = x.shape
            if t % period:
                x = F.pad(x, (0, period - t % period), "reflect")
                t = x.shape[-1]
            return m(x.view(b, c, t // period, period))
        return m, fn
    return make


def period_conv_deep(kind, period, cin, cout, k=5, stride=3):
    def make():
        m = norm_wrap(kind, nn.Conv2d(cin, cout, (k, 1), (stride, 1), padding=((k - 1) // 2, 0))).to(dev)
        return m, m
    return make


def feature_match():
    def make():
        def fn(x):
            a, b = x.chunk(2, 0)
            return (torch.mean(torch.abs(a - b)) * 2).reshape(1)
        return None, fn
    return make


B = 16
T = 8192
for kind in ("plain", "old_wn", "new_wn"):
    op_row(f"conv1d {kind} 128->128 k7", conv1d(kind, 128, 128, 7), (B, 128, T), kind=kind)
    op_row(f"conv1d {kind} 128->128 k11 d5", conv1d(kind, 128, 128, 11, dilation=5), (B, 128, T), kind=kind)
    op_row(f"conv1d {kind} 128->256 k41 s4 g16", conv1d(kind, 128, 256, 41, stride=4, groups=16), (B, 128, T), kind=kind)
    op_row(f"conv1d {kind} 1->128 k15", conv1d(kind, 1, 128, 15), (B, 1, T), kind=kind)
    # weight-dominated: the per-call weight a norm recomputes is what stays
    op_row(f"conv1d {kind} 1024->1024 k5 small-act", conv1d(kind, 1024, 1024, 5), (2, 1024, 64), kind=kind)
    op_row(f"conv1d {kind} 1024->1024 k5 small-act x2 calls", conv1d(kind, 1024, 1024, 5, calls=2), (4, 1024, 64), kind=kind)
    op_row(f"conv1d {kind} 1024->1024 k41 g16 small-act", conv1d(kind, 1024, 1024, 41, groups=16), (2, 1024, 64), kind=kind)
op_row("conv1d spectral 1024->1024 k5 small-act", conv1d("spectral", 1024, 1024, 5), (2, 1024, 64), kind="spectral")
op_row("conv1d spectral 128->128 k7", conv1d("spectral", 128, 128, 7), (B, 128, T), kind="spectral")
for kind in ("plain", "new_wn"):
    op_row(f"convT1d {kind} 512->256 k16 u8", conv_t1d(kind, 512, 256, 16, 8), (B, 512, 256), kind=kind)
    op_row(f"convT1d {kind} 128->64 k4 u2", conv_t1d(kind, 128, 64, 4, 2), (B, 128, 4096), kind=kind)
op_row("avgpool1d 4/2/2 C=1", avgpool(), (B, 1, T))
op_row("avgpool1d 4/2/2 C=128", avgpool(), (B, 128, T))
for inplace in (False, True):
    op_row(f"leaky_relu inplace={inplace}", lrelu_only(inplace), (B, 128, T), inplace=inplace)
    op_row(f"conv-lrelu-conv plain inplace={inplace}", conv_lrelu_conv("plain", 128, 7, inplace), (B, 128, T), inplace=inplace)
    op_row(f"conv-lrelu-conv new_wn inplace={inplace}", conv_lrelu_conv("new_wn", 128, 7, inplace), (B, 128, T), inplace=inplace)
for p in (2, 3, 5, 7, 11):
    op_row(f"period reshape p={p} conv2d 1->32 (5,1) s3 new_wn", period_conv("new_wn", p), (B, 1, T), period=p)
op_row("period conv2d 32->128 (5,1) s3 plain", period_conv_deep("plain", 3, 32, 128), (B, 32, 910, 3))
op_row("period conv2d 32->128 (5,1) s3 new_wn", period_conv_deep("new_wn", 3, 32, 128), (B, 32, 910, 3))
op_row("feature match |a-b|.mean()", feature_match(), (2 * B, 128, T))


# ---- composite: one GAN step of own small models ----------------------------------------------------------------
class Res(nn.Module):
    def __init__(self, c, k, dils, norm):
        super().__init__()
        self.a = nn.ModuleList([norm(nn.Conv1d(c, c, k, dilation=d, padding=(k * d - d) // 2)) for d in dils])
        self.b = nn.ModuleList([norm(nn.Conv1d(c, c, k, padding=(k - 1) // 2)) for _ in dils])

    def forward(self, x):
        for a, b in zip(self.a, self.b):
            x = x + b(F.leaky_relu(a(F.leaky_relu(x, 0.1)), 0.1))
        return x


class Upsampler(nn.Module):
    def __init__(self, norm, mels=80, ch=256, rates=(8, 4, 2), kernels=(3, 5)):
        super().__init__()
        self.pre = norm(nn.Conv1d(mels, ch, 7, padding=3))
        self.ups, self.blocks = nn.ModuleList(), nn.ModuleList()
        for i, u in enumerate(rates):
            self.ups.append(norm(nn.ConvTranspose1d(ch >> i, ch >> (i + 1), 2 * u, u, padding=u // 2)))
            self.blocks.append(nn.ModuleList([Res(ch >> (i + 1), k, (1, 3), norm) for k in kernels]))
        self.post = norm(nn.Conv1d(ch >> len(rates), 1, 7, padding=3))

    def forward(self, x):
        x = self.pre(x)
        for up, blocks in zip(self.ups, self.blocks):
            x = up(F.leaky_relu(x, 0.1))
            x = sum(b(x) for b in blocks) / len(blocks)
        return torch.tanh(self.post(F.leaky_relu(x, 0.1)))


class PeriodD(nn.Module):
    def __init__(self, p, norm):
        super().__init__()
        self.p = p
        ch = [1, 32, 128, 256]
        self.convs = nn.ModuleList([norm(nn.Conv2d(ch[i], ch[i + 1], (5, 1), (3, 1), padding=(2, 0))) for i in range(3)])
        self.post = norm(nn.Conv2d(256, 1, (3, 1), padding=(1, 0)))

    def forward(self, x):
        b, c, t = x.shape
        if t % self.p:
            x = F.pad(x, (0, self.p - t % self.p), "reflect")
            t = x.shape[-1]
        x = x.view(b, c, t // self.p, self.p)
        fm = []
        for c_ in self.convs:
            x = F.leaky_relu(c_(x), 0.1)
            fm.append(x)
        x = self.post(x)
        fm.append(x)
        return x.flatten(1), fm


class ScaleD(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.convs = nn.ModuleList([norm(nn.Conv1d(1, 64, 15, padding=7)),
                                    norm(nn.Conv1d(64, 128, 41, 4, groups=4, padding=20)),
                                    norm(nn.Conv1d(128, 256, 41, 4, groups=16, padding=20)),
                                    norm(nn.Conv1d(256, 256, 5, padding=2))])
        self.post = norm(nn.Conv1d(256, 1, 3, padding=1))

    def forward(self, x):
        fm = []
        for c_ in self.convs:
            x = F.leaky_relu(c_(x), 0.1)
            fm.append(x)
        x = self.post(x)
        fm.append(x)
        return x.flatten(1), fm


class Discs(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.ds = nn.ModuleList([PeriodD(p, norm) for p in (2, 3, 5)] + [ScaleD(norm), ScaleD(norm)])
        self.pool = nn.AvgPool1d(4, 2, padding=2)

    def forward(self, y, g):
        rs, gs, frs, fgs = [], [], [], []
        for i, d in enumerate(self.ds):
            if i == 4:
                y, g = self.pool(y), self.pool(g)
            (r, fr), (q, fq) = d(y), d(g)
            rs.append(r); gs.append(q); frs.append(fr); fgs.append(fq)
        return rs, gs, frs, fgs


def composite(name, norm, batch, frames, phases):
    rec = {"name": name, "batch": batch, "frames": frames}
    t0 = time.time()
    gen = disc = og = od = None
    try:
        gc.collect(); torch.cuda.empty_cache()
        gen = Upsampler(norm).to(dev)
        disc = Discs(norm).to(dev)
        og = torch.optim.AdamW(gen.parameters(), 2e-4)
        od = torch.optim.AdamW(disc.parameters(), 2e-4)
        rec["gen_params"] = sum(p.numel() for p in gen.parameters())
        rec["disc_params"] = sum(p.numel() for p in disc.parameters())
        samples = frames * 64
        peaks = {}

        def step(measure):
            mel = torch.randn(batch, 80, frames, device=dev)
            y = torch.randn(batch, 1, samples, device=dev)
            if measure:
                torch.cuda.synchronize(); peaks["before_step"] = mib(torch.cuda.memory_allocated())
                torch.cuda.reset_peak_memory_stats()
            y_hat = gen(mel)
            if measure:
                torch.cuda.synchronize(); peaks["after_gen_fwd"] = mib(torch.cuda.memory_allocated())
            if "d" in phases:
                od.zero_grad()
                rs, gs, _, _ = disc(y, y_hat.detach())
                loss_d = sum(((1 - r) ** 2).mean() + (q ** 2).mean() for r, q in zip(rs, gs))
                if measure:
                    torch.cuda.synchronize(); peaks["after_d_fwd"] = mib(torch.cuda.memory_allocated())
                loss_d.backward()
                od.step()
                if measure:
                    torch.cuda.synchronize(); peaks["peak_through_d"] = mib(torch.cuda.max_memory_allocated())
                    peaks["after_d_step"] = mib(torch.cuda.memory_allocated())
                    torch.cuda.reset_peak_memory_stats()
            og.zero_grad()
            rs, gs, frs, fgs = disc(y, y_hat)
            loss = sum(((1 - q) ** 2).mean() for q in gs)
            if "fm" in phases:
                loss = loss + 2 * sum(torch.mean(torch.abs(a - b)) for fr, fg in zip(frs, fgs) for a, b in zip(fr, fg))
            if measure:
                torch.cuda.synchronize(); peaks["after_g_fwd"] = mib(torch.cuda.memory_allocated())
            loss.backward()
            if measure:
                torch.cuda.synchronize(); peaks["peak_g_bwd"] = mib(torch.cuda.max_memory_allocated())
            og.step()
            if measure:
                torch.cuda.synchronize(); peaks["peak_total"] = mib(torch.cuda.max_memory_allocated())

        step(False)
        step(True)
        rec.update(peaks)
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 2)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)
    del gen, disc, og, od


for norm_name, norm in (("plain", lambda m: m), ("new_wn", new_weight_norm), ("old_wn", old_weight_norm)):
    composite(f"gan step {norm_name} d+g+fm", norm, 16, 64, ("d", "fm"))
composite("gan step new_wn g only", new_weight_norm, 16, 64, ())
composite("gan step new_wn g+fm", new_weight_norm, 16, 64, ("fm",))
composite("gan step new_wn d+g+fm B32", new_weight_norm, 32, 64, ("d", "fm"))

if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], "w"), indent=1)
