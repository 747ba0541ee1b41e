"""What the backward of a running sum over outer products holds, by the layout its operands come in.

probe_ckpt9 measured a checkpointed block of running sums (k, v from their own linears, (B, L, D) contiguous,
einsum "bld,ble->blde" then cumsum over L) at 3.06 running-sum tensors (fp32) over the persistent state under bf16
autocast, 4.13 in fp32. Reading PyTorch: under autocast cumsum gets dtype=fp32 (its output is fp32, its input stays
bf16), and its backward casts the fp32 gradient to bf16 before the reversed running sum (flip, cumsum, flip), so
it holds the fp32 gradient, its bf16 copy and three bf16 buffers: 3 fp32 tensors' worth (4 in fp32). A linear-
attention LM whose q, k, v come from one fused linear split into heads by view + permute (non-contiguous views,
einsum "bhld,bhle->bhlde") looks like it holds about half a tensor more. Here the attention core runs alone, with
x a leaf that requires grad, in three layouts: "own_linears" (as probe_ckpt9), "heads_permuted" (fused qkv, heads
split by view + permute), "heads_contiguous" (the same, with .contiguous() on q, k, v), each in fp32 and under bf16
autocast. The loss is (out * g).sum() for a fixed g, so backward starts from a real gradient.

Each row: the running sum's shape and whether the einsum's output and the gradient reaching the running sum are
contiguous; kept = allocated after forward over before; fwd_peak and bwd_peak over the same base; all in units
of one fp32 running sum (unit_mib).
python probe_vmap10_cumsum.py [OUT.json]   (prints one JSON line per row; well under 60 s on an H200.)
"""
import json, sys, time
import torch
import torch.nn as nn

MIB = 2 ** 20
dev = "cuda"
res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}


class OwnLinears(nn.Module):
    """k and v from linears of their own: (B, L, D), contiguous."""

    def __init__(self, width):
        super().__init__()
        self.keys, self.values, self.queries = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)

    def forward(self, x, seen):
        k, v, q = torch.sigmoid(self.keys(x)), self.values(x), torch.sigmoid(self.queries(x))
        outer = torch.einsum("bld,ble->blde", k, v)
        seen["outer_contiguous"] = outer.is_contiguous()
        state = outer.cumsum(dim=1)
        if state.requires_grad:
            state.register_hook(lambda grad: seen.__setitem__("grad_contiguous", grad.is_contiguous()))
        seen["state_shape"] = list(state.shape)
        return torch.einsum("bld,blde->ble", q, state)


class FusedHeads(nn.Module):
    """q, k, v from one linear, split into heads by view + permute: (B, H, L, Dh) views, contiguous on request."""

    def __init__(self, width, heads, contiguous):
        super().__init__()
        self.heads, self.contiguous = heads, contiguous
        self.qkv = nn.Linear(width, 3 * width, bias=False)

    def forward(self, x, seen):
        b, length, width = x.shape
        q, k, v = self.qkv(x).view(b, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        if self.contiguous:
            q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        q, k = torch.nn.functional.elu(q) + 1.0, torch.nn.functional.elu(k) + 1.0
        outer = torch.einsum("bhld,bhle->bhlde", k, v)
        seen["outer_contiguous"] = outer.is_contiguous()
        seen["outer_stride"] = list(outer.stride())
        state = outer.cumsum(dim=2)
        if state.requires_grad:
            state.register_hook(lambda grad: seen.__setitem__("grad_contiguous", grad.is_contiguous()))
        seen["state_shape"] = list(state.shape)
        out = torch.einsum("bhld,bhlde->bhle", q, state)
        return out.transpose(1, 2).reshape(b, length, width)


def row(layout, amp):
    rec = {"layout": layout, "amp": amp}
    t0 = time.time()
    try:
        torch.cuda.empty_cache(); torch.cuda.synchronize()
        if layout == "own_linears":
            batch, length, width = 8, 1024, 128
            core = OwnLinears(width).to(dev)
            unit = batch * length * width * width * 4
        else:
            batch, length, heads, head_dim = 4, 1024, 2, 128
            width = heads * head_dim
            core = FusedHeads(width, heads, layout == "heads_contiguous").to(dev)
            unit = batch * heads * length * head_dim * head_dim * 4
        x = torch.randn(batch, length, width, device=dev, requires_grad=True)
        g = torch.randn(batch, length, width, device=dev)
        seen = {}
        for step in range(3):
            x.grad = None
            for p in core.parameters():
                p.grad = None
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                out = core(x, seen)
            torch.cuda.synchronize()
            kept = torch.cuda.memory_allocated() - before
            fwd_peak = torch.cuda.max_memory_allocated() - before
            (out.float() * g).sum().backward()
            torch.cuda.synchronize()
            bwd_peak = torch.cuda.max_memory_allocated() - before
            del out
        rec.update(seen, unit_mib=round(unit / MIB, 1), kept_units=round(kept / unit, 3),
                   fwd_peak_units=round(fwd_peak / unit, 3), bwd_peak_units=round(bwd_peak / unit, 3),
                   bwd_over_kept_units=round((bwd_peak - kept) / unit, 3))
        del core, x, g
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)


_ = torch.ones(8, 8, device=dev) @ torch.ones(8, 8, device=dev)  # cuBLAS workspace before any row
for layout in ("own_linears", "heads_permuted", "heads_contiguous"):
    for amp in (False, True):
        row(layout, amp)
if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], "w"), indent=1)
