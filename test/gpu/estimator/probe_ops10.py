# Backward transients of index ops the forward trace models by formula (helper ops10): a learned table looked up by
# several index tensors (`table[level, hashed]`, backward = sort-based index_put_ with accumulate), and element-wise
# products of an edge-sized tensor by a broadcast one (`messages * weights.unsqueeze(-1)`) whose backward makes a
# gradient per operand. Each row: the peak over one forward + backward above what was allocated before it, and the
# bytes forward kept (allocated after forward minus before), so the transient is peak - kept.
# python probe_ops10.py [OUT.json]   (prints one JSON line per row; under a minute on an H200)
import json, sys, time
import torch

MIB = 2 ** 20
dev = "cuda"
rows = []
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)


def row(name, fn, **info):
    rec = {"name": name, **info}
    t0 = time.time()
    try:
        torch.cuda.empty_cache(); torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        kept = fn()
        torch.cuda.synchronize()
        rec["kept_mib"] = round(kept / MIB, 1)
        rec["peak_over_base_mib"] = round((torch.cuda.max_memory_allocated() - base) / MIB, 1)
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    rows.append(rec)
    print(json.dumps(rec), flush=True)


def table_lookup(points, levels, corners, width, rows_=2 ** 19):
    def fn():
        table = torch.zeros(levels, rows_, width, device=dev, requires_grad=True)
        level = torch.arange(levels, device=dev)[None, :, None]
        hashed = torch.randint(0, rows_, (points, levels, corners), device=dev)
        w = torch.rand(points, levels, corners, device=dev)
        before = torch.cuda.memory_allocated()
        feats = table[level, hashed]                      # (points, levels, corners, width)
        out = (w.unsqueeze(-1) * feats).sum(2)
        kept = torch.cuda.memory_allocated() - before
        out.sum().backward()
        return kept
    return fn


def edge_product(edges, heads, dim, both):
    def fn():
        x = torch.randn(edges, heads, dim, device=dev, requires_grad=True)
        a = torch.rand(edges, heads, device=dev, requires_grad=both)
        before = torch.cuda.memory_allocated()
        y = x * a.unsqueeze(-1)
        out = y.sum()
        kept = torch.cuda.memory_allocated() - before
        out.backward()
        return kept
    return fn


for points in (1 << 18, 1 << 20):
    for levels, corners in ((16, 8), (8, 4)):
        row(f"table_lookup p={points} L={levels} c={corners}", table_lookup(points, levels, corners, 2),
            points=points, levels=levels, corners=corners, index_elements=points * levels * corners)
for edges in (1 << 20, 1 << 22):
    for both in (True, False):
        row(f"edge_product E={edges} both={both}", edge_product(edges, 4, 64, both), edges=edges, output_mib=round(edges * 4 * 64 * 4 / MIB, 1))

if len(sys.argv) > 1:
    json.dump({"torch": torch.__version__, "rows": rows}, open(sys.argv[1], "w"), indent=1)
