"""Which tensors a torch.compile'd (inductor) MLP saves for backward, by shape and dtype, against eager: Linear ->
[BatchNorm1d] -> ReLU(inplace) -> [Dropout] blocks of widths 2048, 1024 on 256 features, batch 4096, fp32. Read with
saved_tensors_hooks around the compiled forward (AOTAutograd saves through ctx.save_for_backward).
python probe_compile9.py [OUT.json]   (one JSON line per row; well under 200 s on an H200.)
"""
import json, sys, time
import torch
import torch.nn as nn

dev = "cuda"
B, IN, WIDTHS = 4096, 256, (2048, 1024)
res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "B": B, "rows": []}


def make(bn, drop):
    layers, d = [], IN
    for h in WIDTHS:
        layers.append(nn.Linear(d, h))
        if bn:
            layers.append(nn.BatchNorm1d(h))
        layers.append(nn.ReLU(inplace=True))
        if drop:
            layers.append(nn.Dropout(0.1))
        d = h
    layers.append(nn.Linear(d, 1))
    return nn.Sequential(*layers)


def row(bn, drop, compiled):
    rec = {"bn": bn, "dropout": drop, "compiled": compiled}
    t0 = time.time()
    try:
        torch._dynamo.reset()
        model = make(bn, drop).to(dev)
        run = torch.compile(model) if compiled else model
        x = torch.randn(B, IN, device=dev)
        for step in range(3):
            saved = []
            seen = {}

            def pack(t):
                key = (t.untyped_storage().data_ptr(), t.data_ptr())
                if key not in seen and not isinstance(t, nn.Parameter):
                    seen[key] = 1
                    saved.append({"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                                  "storage_bytes": t.untyped_storage().nbytes()})
                return t

            before = torch.cuda.memory_allocated()
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                out = run(x)
            kept = torch.cuda.memory_allocated() - before
            out.sum().backward()
            model.zero_grad(set_to_none=True)
        rec["saved"] = saved
        rec["kept_bytes_per_row"] = round(kept / B, 1)
        rec["saved_storage_bytes_per_row"] = round(sum(s["storage_bytes"] for s in saved) / B, 1)
    except Exception as e:
        rec["error"] = repr(e)[:400]
    rec["s"] = round(time.time() - t0, 1)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)


for bn, drop in ((True, True), (True, False), (False, True), (False, False)):
    for compiled in (False, True):
        row(bn, drop, compiled)
if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], "w"), indent=1)
