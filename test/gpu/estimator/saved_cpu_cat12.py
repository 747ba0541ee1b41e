"""What forward keeps for backward in torchvision's MViT and RAFT, counted on the CPU (helper cat12, issue #13):
every tensor autograd saves (torch.autograd.graph.saved_tensors_hooks), once per storage, in fp32 elements per
sample. The counts include the weights the layers save (a convolution or linear keeps its weight) and the inputs a
layer keeps; the estimator counts both apart (parameters, step inputs), so a comparison subtracts them.
python saved_cpu_cat12.py   (torch 1.13 / torchvision 0.14 on the CPU: a few minutes; results/cat12_cpu_saved.json.)
"""
import json
import torch
from torchvision.models import video as V, optical_flow as OF


class Stop(Exception):
    pass


def saved_per_sample(model, args, kwargs, batch, blocks=None, stop_after=None):
    seen, marks = {}, []

    def pack(t):
        s = t.storage()
        seen[s.data_ptr()] = s.nbytes()
        return t

    def hook(mod, inp, out):
        marks.append(sum(seen.values()))
        if stop_after is not None and len(marks) == stop_after:
            raise Stop()

    for b in blocks or []:
        b.register_forward_hook(hook)
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(*args, **kwargs)
    except Stop:
        pass
    per_block, prev = [], 0
    for v in marks:
        per_block.append((v - prev) / 4 / batch)
        prev = v
    return sum(seen.values()) / 4 / batch, per_block


rows = []
for name in ["mvit_v2_s", "mvit_v1_b"]:
    m = getattr(V, name)().train()
    x = torch.randn(2, 3, 16, 224, 224)
    _, per_block = saved_per_sample(m, (x,), {}, 2, m.blocks, stop_after=5)
    params = [sum(p.numel() for p in b.parameters()) for b in m.blocks[:5]]
    rows.append({"model": name, "batch": 2, "frames": 16, "size": 224, "first_blocks_saved_per_sample": per_block, "first_blocks_params": params})
    print(json.dumps(rows[-1]), flush=True)
for name in ["raft_small", "raft_large"]:
    m = getattr(OF, name)().train()
    for h, w, u in [(128, 160, 2), (128, 160, 4), (256, 320, 2)]:
        a, b = torch.rand(2, 3, h, w), torch.rand(2, 3, h, w)
        total, _ = saved_per_sample(m, (a, b), {"num_flow_updates": u}, 2)
        rows.append({"model": name, "batch": 2, "h": h, "w": w, "updates": u, "saved_per_sample": total,
                     "params": sum(p.numel() for p in m.parameters())})
        print(json.dumps(rows[-1]), flush=True)
json.dump({"torch": torch.__version__, "rows": rows}, open("results/cat12_cpu_saved.json", "w"), indent=1)
