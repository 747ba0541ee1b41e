"""What per-group message passing keeps for backward (helper rgcn13, issue #13): a loop over edge types that picks
each type's edges (by `nonzero`, by a boolean mask), gathers their source rows, transforms them and sums them into
the target nodes (index_add out of place / in place, scatter_add_, index_copy), with the sources requiring grad.

Rows (one JSON line each):
  kept_mib      allocated after forward minus before (what backward will read, plus the output).
  fwd_peak_over_mib / bwd_peak_over_mib  peaks over the base (inputs, model, no optimizer).
  expected_*    the figures each hypothesis predicts, in MiB: gathered rows (E x D fp32), messages (E x D fp32).
python probe_rgcn13.py   (under 60 s on an H200.)
"""
import gc, json, time
import torch

MIB = 2 ** 20
dev = "cuda"
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
t0 = time.time()
N, E, R, D = 50_000, 1_000_000, 20, 128


def emit(row):
    print(json.dumps(row), flush=True)


def run(name, forward, weight_requires=True):
    rec = {"row": name, "N": N, "E": E, "R": R, "D": D}
    try:
        gc.collect(); torch.cuda.empty_cache()
        g = torch.Generator(device=dev).manual_seed(0)
        src = torch.randint(0, N, (E,), device=dev, generator=g)
        dst = torch.randint(0, N, (E,), device=dev, generator=g)
        rel = torch.randint(0, R, (E,), device=dev, generator=g)
        norm = torch.rand(E, device=dev, generator=g)
        h = torch.randn(N, D, device=dev, requires_grad=True)
        w = torch.randn(R, D, D, device=dev, requires_grad=weight_requires)
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = forward(h, w, src, dst, rel, norm)
        torch.cuda.synchronize()
        rec["kept_mib"] = round((torch.cuda.memory_allocated() - base) / MIB, 1)
        rec["fwd_peak_over_mib"] = round((torch.cuda.max_memory_allocated() - base) / MIB, 1)
        torch.cuda.reset_peak_memory_stats()
        out.pow(2).mean().backward()
        torch.cuda.synchronize()
        rec["bwd_peak_over_mib"] = round((torch.cuda.max_memory_allocated() - base) / MIB, 1)
        rec["expected_rows_mib"] = round(E * D * 4 / MIB, 1)
        rec["output_mib"] = round(N * D * 4 / MIB, 1)
        del out
    except Exception as e:  # noqa: BLE001
        rec["error"] = repr(e)[:300]
    emit(rec)


def nonzero_index_add(h, w, src, dst, rel, norm):
    out = h * 1.0
    for r in range(R):
        idx = (rel == r).nonzero(as_tuple=True)[0]
        msg = h[src[idx]] @ w[r] * norm[idx, None]
        out = out.index_add(0, dst[idx], msg)
    return out


def nonzero_index_add_inplace(h, w, src, dst, rel, norm):
    out = h * 1.0
    for r in range(R):
        idx = torch.nonzero(rel == r).squeeze(1)
        msg = h[src[idx]] @ w[r]
        out.index_add_(0, dst[idx], msg)
    return out


def mask_scatter_add(h, w, src, dst, rel, norm):
    out = torch.zeros_like(h)
    for r in range(R):
        mask = rel == r
        msg = h[src[mask]] @ w[r]
        out = out.scatter_add(0, dst[mask].unsqueeze(1).expand(-1, D), msg)
    return out


def mask_index_add_no_matmul(h, w, src, dst, rel, norm):
    # Messages that are the gathered rows times a per-edge weight without history: only index_add keeps them.
    out = h * 1.0
    for r in range(R):
        mask = rel == r
        msg = h[src[mask]] * norm[mask, None]
        out = out.index_add(0, dst[mask], msg)
    return out


def where_index_copy(h, w, src, dst, rel, norm):
    out = h * 1.0
    for r in range(R):
        idx = torch.where(rel == r)[0]
        msg = torch.tanh(h[src[idx]] @ w[r])
        out = out.index_copy(0, dst[idx], msg)
    return out


run("nonzero_index_add", nonzero_index_add)
run("nonzero_index_add_inplace", nonzero_index_add_inplace)
run("mask_scatter_add", mask_scatter_add)
run("mask_index_add_no_matmul", mask_index_add_no_matmul)
run("where_index_copy", where_index_copy)
run("nonzero_index_add_frozen_w", nonzero_index_add, weight_requires=False)
emit({"row": "done", "seconds": round(time.time() - t0, 1), "torch": torch.__version__})
