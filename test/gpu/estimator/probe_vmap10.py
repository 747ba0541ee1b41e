"""Which op keeps more under torch.func's vmap than the same members run as one plain module.

probe_custom9 found that vmap(functional_call(...)) over N=4 stacked MLPs 784-2048x3-10 (Linear -> LayerNorm -> GELU
[-> Dropout]) keeps 384 MiB more after forward than one plain member over the same 4 x 4096 rows: one 2048-wide fp32
tensor per hidden block, with or without Dropout. Here each op runs alone, the same way: N copies stacked with
stack_module_state and called through vmap(functional_call(base, (params, buffers), (x,)), randomness="different")
on x of shape (N, B, width), against one plain copy on x of shape (N * B, width). x is a leaf that requires grad, so
every op saves for backward what it saves in the middle of a network.

Reading of functorch's batching rules (aten/src/ATen/functorch), to be confirmed here:
  - native_layer_norm with a batched weight/bias (BatchRulesNorm.cpp) runs layer norm without the affine and then
    `result * weight + bias` as separate ops: the mul saves the normalized tensor, one input-sized tensor more than
    eager layer norm keeps ("layernorm_stacked" ~ +1 unit). With weight/bias not batched ("layernorm_shared",
    in_dims None for the parameters) or without affine ("layernorm_noaffine") it calls the fused op: ~ +0.
  - linear under vmap is `input.matmul(weight.t())` then `.add(bias)` (linear_decomp): nothing more saved ("linear*"
    ~ +0 kept), but the matmul's output and the sum exist together for a moment (forward peak +1 output).
  - batch_norm under vmap (batch_norm_batch_rule) and group_norm (native_group_norm_plumbing) always run the norm
    without the affine and multiply/add after it when anything is batched: ~ +1 each ("batchnorm_stacked" may keep one
    more: the batch rule folds the members into the channels, (N, B, C) -> (B, N * C), a copy it then saves).
  - gelu, dropout (native_dropout with randomness="different") and a loss taken outside vmap: ~ +0.
  - "manual_ln_affine" is the plain (no vmap) decomposition `layer_norm(x) * w + b`: it should keep what
    "layernorm_stacked" keeps under vmap.
  - the whole MLP: +3 units (one per LayerNorm), and +0 when its LayerNorm parameters are shared (in_dims None).

Each row: kept_mib = allocated after forward (output alive) minus before; fwd_peak_over_mib and bwd_peak_over_mib
over the same base (backward of (out * g).sum() for a fixed random g, or of the loss); saved_units = what autograd's saved-tensor hooks see saved
in a separate forward (distinct storages, parameters and x left out; the largest listed in saved_biggest); unit_mib = one (members * B, 2048) fp32 tensor;
extra_units (vmap rows) = (kept - the plain row's kept) / unit. Autocast rows run the op under bf16 autocast.
python probe_vmap10.py [OUT.json]   (prints one JSON line per row; well under 120 s on an H200.)
"""
import gc, json, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

MIB = 2 ** 20
dev = "cuda"
N, B, D, IN, CLASSES = 4, 4096, 2048, 784, 10
res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "N": N, "B": B, "width": D, "rows": []}


class ManualAffineLayerNorm(nn.Module):
    """Layer norm without its affine, then `* weight + bias` as two ops: what the batching rule runs under vmap."""

    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],)) * self.weight + self.bias


def mlp(affine=True, drop=False):
    layers, d = [], IN
    for _ in range(3):
        layers += [nn.Linear(d, D), nn.LayerNorm(D, elementwise_affine=affine), nn.GELU()]
        layers += [nn.Dropout(0.1)] if drop else []
        d = D
    return nn.Sequential(*layers, nn.Linear(d, CLASSES))


OPS = {
    "linear": (lambda: nn.Linear(D, D), D),
    "linear_nobias": (lambda: nn.Linear(D, D, bias=False), D),
    "layernorm_stacked": (lambda: nn.LayerNorm(D), D),
    "layernorm_noaffine": (lambda: nn.LayerNorm(D, elementwise_affine=False), D),
    "batchnorm_stacked": (lambda: nn.BatchNorm1d(D), D),
    "groupnorm_stacked": (lambda: nn.GroupNorm(32, D), D),
    "rmsnorm_stacked": (lambda: nn.RMSNorm(D), D),
    "gelu": (lambda: nn.GELU(), D),
    "dropout": (lambda: nn.Dropout(0.1), D),
    "manual_ln_affine": (lambda: ManualAffineLayerNorm(D), D),
    "block_linear_ln_gelu": (lambda: nn.Sequential(nn.Linear(D, D), nn.LayerNorm(D), nn.GELU()), D),
    "head_ce_loss": (lambda: nn.Linear(D, CLASSES), D),
    "mlp": (lambda: mlp(), IN),
    "mlp_dropout": (lambda: mlp(drop=True), IN),
    "mlp_noaffine": (lambda: mlp(affine=False), IN),
}


def saved_for_backward(forward, exclude):
    """Bytes of the distinct storages that autograd saves during `forward`, leaving out the parameters and the input.
    Run apart from the measured steps: the hooks keep what they pack until the graph is collected."""
    skip = {t.untyped_storage().data_ptr() for t in exclude}
    seen = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in skip:
            seen[ptr] = (t.untyped_storage().nbytes(), list(t.shape), str(t.dtype).replace("torch.", ""))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = forward()
    del out
    gc.collect()
    return sum(v[0] for v in seen.values()), sorted(seen.values(), reverse=True)[:8]


def row(op, mode, amp=False, n=N):
    """mode: "plain" (one copy, n * B rows), "vmap" (n stacked copies), "vmap_shared" (one copy's parameters given
    to vmap with in_dims None, so they are not batched; for "mlp" only the LayerNorm parameters are shared)."""
    make, width = OPS[op]
    unit = n * B * D * 4
    rec = {"op": op, "mode": mode, "amp": amp, "members": n, "unit_mib": round(unit / MIB, 1)}
    t0 = time.time()
    try:
        torch.cuda.empty_cache(); torch.cuda.synchronize()
        if mode == "plain":
            model = make().to(dev)
            trained = list(model.parameters())
            x = torch.randn(n * B, width, device=dev, requires_grad=True)
            run = lambda: model(x)
        else:
            models = [make().to(dev) for _ in range(n)]
            params, buffers = stack_module_state(models)
            base = make().to("meta")
            if mode == "vmap_shared":
                shared = {k: v for k, v in models[0].named_parameters()}
                keep = (lambda k: "." in k and isinstance(base.get_submodule(k.rsplit(".", 1)[0]), nn.LayerNorm)) \
                    if op.startswith("mlp") else (lambda k: True)
                params = {k: (shared[k] if keep(k) else v) for k, v in params.items()}
                p_dims = {k: (None if keep(k) else 0) for k in params}
            else:
                p_dims = 0
            del models
            trained = [p for p in params.values() if p.requires_grad]
            x = torch.randn(n, B, width, device=dev, requires_grad=True)
            fwd = vmap(lambda p, b, xx: functional_call(base, (p, b), (xx,)), in_dims=(p_dims, 0, 0),
                       randomness="different")
            run = lambda: fwd(params, buffers, x)
        y = torch.randint(0, CLASSES, (n * B,), device=dev)
        # Without a loss, backward starts from a weighted sum (`(out * g).sum()`): a real output-sized gradient, as a
        # layer in a network gets, rather than sum()'s expanded one. g is made in the first step, before the measured.
        g = None
        with_loss = op.startswith("head") or op.startswith("mlp")
        for step in range(3):
            for p in trained + [x]:
                p.grad = None
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                out = run()
                loss = F.cross_entropy(out.reshape(-1, CLASSES).float(), y) if with_loss else None
            torch.cuda.synchronize()
            dtype = str(out.dtype)
            kept = torch.cuda.memory_allocated() - before
            fwd_peak = torch.cuda.max_memory_allocated() - before
            if not with_loss and g is None:
                g = torch.randn(out.shape, device=dev)
            (loss if with_loss else (out.float() * g).sum()).backward()
            torch.cuda.synchronize()
            bwd_peak = torch.cuda.max_memory_allocated() - before
            del out, loss
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            saved, biggest = saved_for_backward(run, trained + [x])
        rec.update(saved_units=round(saved / unit, 3), saved_biggest=biggest)
        rec.update(kept_mib=round(kept / MIB, 1), fwd_peak_over_mib=round(fwd_peak / MIB, 1),
                   bwd_peak_over_mib=round(bwd_peak / MIB, 1), kept_units=round(kept / unit, 3), out_dtype=dtype)
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    return rec


def emit(rec):
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)


_ = torch.ones(8, 8, device=dev) @ torch.ones(8, 8, device=dev)  # cuBLAS workspace before any row
t_start = time.time()
# The last case runs the MLP with dropout for 16 members (65,536 rows): the per-op figures at a larger scale.
CASES = [(op, False, N) for op in OPS] + [("linear", True, N), ("layernorm_stacked", True, N), ("block_linear_ln_gelu", True, N),
                                          ("mlp_dropout", False, 16)]
for op, amp, n in CASES:
    plain = row(op, "plain", amp, n)
    emit(plain)
    if op == "manual_ln_affine":  # compared with layernorm_stacked's rows in the summary, not with vmap
        continue
    modes = ["vmap"] + (["vmap_shared"] if op in ("layernorm_stacked", "linear", "mlp") else [])
    for mode in modes:
        rec = row(op, mode, amp, n)
        if "kept_mib" in rec and "kept_mib" in plain:
            unit_mib = rec["unit_mib"]
            rec["extra_units"] = round((rec["kept_mib"] - plain["kept_mib"]) / unit_mib, 3)
            rec["extra_fwd_peak_units"] = round((rec["fwd_peak_over_mib"] - plain["fwd_peak_over_mib"]) / unit_mib, 3)
            rec["extra_bwd_peak_units"] = round((rec["bwd_peak_over_mib"] - plain["bwd_peak_over_mib"]) / unit_mib, 3)
        emit(rec)
    if time.time() - t_start > 110:
        emit({"stopped": "time budget", "after": op})
        break


def kept(op, mode, amp=False):
    return next((r.get("kept_mib") for r in res["rows"] if r.get("op") == op and r.get("mode") == mode and r.get("amp") == amp), None)


# The manual decomposition without vmap against layer norm's two rows: equal to the vmapped one if the batching rule
# is the reason.
summary = {"summary": True, "manual_ln_affine_plain_kept_mib": kept("manual_ln_affine", "plain"),
           "layernorm_plain_kept_mib": kept("layernorm_stacked", "plain"),
           "layernorm_vmap_kept_mib": kept("layernorm_stacked", "vmap"),
           "extra_units_by_op": {f'{r["op"]}/{r["mode"]}' + ("/amp" if r["amp"] else "") + f'/n{r["members"]}': r.get("extra_units")
                                 for r in res["rows"] if r.get("mode", "").startswith("vmap")}}
emit(summary)
res["s"] = round(time.time() - t_start, 1)
if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], "w"), indent=1)
