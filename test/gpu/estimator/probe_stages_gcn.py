# Where EfficientNetV2-M fp16 inference (b160, 416 px) and the holdout3 dense GCN spend their peak (one run, NVIDIA H200,
# torch 2.11.0+cu130): per stage and per block peaks over their start; the GCN step after forward and in backward.
# Run from the repository root: python test/gpu/estimator/probe_stages_gcn.py > test/gpu/estimator/results/probe-stages-gcn.json
import json, sys, importlib.util, torch, torchvision
MIB = 2**20
out = {}
def mib(x): return round(x / MIB, 1)
dev = "cuda"

# 1. EfficientNetV2-M, fp16, inference_mode, b160 at 416.
model = torchvision.models.get_model("efficientnet_v2_m", weights=None, num_classes=1000).cuda().half().eval()
torch.cuda.synchronize(); base = torch.cuda.memory_allocated()
out["effnet_weights"] = mib(base)
def run(make_input, label):
    torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    with torch.inference_mode():
        x = make_input()
        y = model(x)
        y = y.float().softmax(-1).topk(5, dim=-1)
    torch.cuda.synchronize()
    out[label] = {"peak_over_start": mib(torch.cuda.max_memory_allocated() - start), "peak": mib(torch.cuda.max_memory_allocated())}
    del x, y
run(lambda: torch.randn(160, 3, 416, 416, device=dev, dtype=torch.half), "effnet_fp16_input")
run(lambda: torch.randn(160, 3, 416, 416).cuda().half(), "effnet_script_way")
# per stage: peak while the stage runs, over what was allocated at its start, and the stage's output size
stages = []
def pre(m, inp):
    torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); m._start = torch.cuda.memory_allocated()
def post(m, inp, o):
    torch.cuda.synchronize()
    stages.append({"name": m._name, "start": mib(m._start), "peak_over_start": mib(torch.cuda.max_memory_allocated() - m._start),
                   "in": mib(inp[0].numel() * 2), "out": mib(o.numel() * 2), "shape": list(o.shape)})
hooks = []
for i, m in enumerate(list(model.features) + [model.avgpool, model.classifier]):
    m._name = f"features.{i}" if i < len(model.features) else type(m).__name__
    hooks += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
with torch.inference_mode():
    x = torch.randn(160, 3, 416, 416, device=dev, dtype=torch.half)
    model(x)
for h in hooks: h.remove()
out["effnet_stages"] = stages
# inside the biggest stage: per block
blocks = []
def bpre(m, inp):
    torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); m._start = torch.cuda.memory_allocated()
def bpost(m, inp, o):
    torch.cuda.synchronize()
    blocks.append({"name": m._name, "peak_over_start": mib(torch.cuda.max_memory_allocated() - m._start), "in": mib(inp[0].numel() * 2), "out": mib(o.numel() * 2)})
hooks = []
for si in (1, 2, 3):
    for bi, blk in enumerate(model.features[si]):
        blk._name = f"features.{si}.{bi}"
        hooks += [blk.register_forward_pre_hook(bpre), blk.register_forward_hook(bpost)]
with torch.inference_mode():
    model(x)
for h in hooks: h.remove()
out["effnet_blocks"] = blocks
torch.backends.cudnn.enabled = False
run(lambda: torch.randn(160, 3, 416, 416, device=dev, dtype=torch.half), "effnet_no_cudnn")
torch.backends.cudnn.enabled = True
del model, x
torch.cuda.empty_cache()

# 2. The GCN of holdout3, one step: what forward keeps, and the peak of backward.
spec = importlib.util.spec_from_file_location("gcn", "test/gpu/holdout3/scripts/train_gcn_graphs_argparse.py")
gcn = importlib.util.module_from_spec(spec); spec.loader.exec_module(gcn)
args = gcn.get_args()
model = gcn.GCN(args.in_feats, args.hidden, args.layers, args.classes).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
data = gcn.RandomGraphs(args.batch_size, args.num_nodes, args.in_feats, args.classes, args.edge_prob)
batch = [torch.stack([data[i][j] for i in range(args.batch_size)]) if j < 3 else torch.tensor([data[i][3] for i in range(args.batch_size)]) for j in range(4)]
for step in range(2):
    x, adj, mask, y = [t.cuda() for t in batch]
    torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); s0 = torch.cuda.memory_allocated()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        o = model(x, adj, mask)
        loss = torch.nn.functional.cross_entropy(o, y)
    torch.cuda.synchronize(); s1 = torch.cuda.memory_allocated(); p1 = torch.cuda.max_memory_allocated()
    opt.zero_grad(); torch.cuda.reset_peak_memory_stats()
    loss.backward()
    torch.cuda.synchronize(); p2 = torch.cuda.max_memory_allocated()
    opt.step()
    out[f"gcn_step{step}"] = {"start_with_batch": mib(s0), "after_forward": mib(s1), "forward_peak": mib(p1), "backward_peak": mib(p2), "batch_bytes": mib(sum(t.numel() * t.element_size() for t in (x, adj, mask, y)))}
    del o, loss
print(json.dumps(out, indent=1))
