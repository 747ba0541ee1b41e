"""cust7a probe 2: the DDPM U-Net of held-out set 7 (bf16 autocast), memory allocated after each ResBlock / Attention
/ resampling layer of its down, mid and up lists and after its output head, at batch 2 and 4: the per-sample bytes
forward has kept by then, block by block. Writes $OUT/probe_cust7a_unet.json."""
import importlib.util, json, os, sys
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ddpm", os.path.join(HERE, "..", "holdout7", "scripts", "train_ddpm_classcond_cfg.py"))
ddpm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ddpm)

model = ddpm.UNet(100).cuda().train()
marks = []
watched = []
for name, lst in (("down", model.down), ("mid", [model.mid]), ("up", model.up)):
    for i, blocks in enumerate(lst):
        for j, m in enumerate(blocks):
            watched.append((f"{name}{i}.{j}:{type(m).__name__}", m))
watched.append(("out", model.out))
for label, m in watched:
    m.register_forward_hook(lambda mod, inp, out, label=label: marks.append((label, torch.cuda.memory_allocated())))

runs = {}
for b in (2, 4):
    for attempt in range(2):
        marks.clear()
        model.zero_grad(set_to_none=True)
        x = torch.randn(b, 3, 128, 128, device="cuda")
        t = torch.randint(0, 1000, (b,), device="cuda")
        y = torch.randint(0, 101, (b,), device="cuda")
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x, t, y)
        torch.cuda.synchronize()
        end = torch.cuda.memory_allocated() - base
        rows = [(label, mem - base) for label, mem in marks]
        out.float().square().mean().backward()
        del out
    runs[b] = {"rows": rows, "end": end}
per_sample = [(label, (m4 - m2) / 2) for (label, m2), (_, m4) in zip(runs[2]["rows"], runs[4]["rows"])]
result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "per_sample_after_block": per_sample,
          "end_per_sample": (runs[4]["end"] - runs[2]["end"]) / 2}
print(json.dumps(result))
with open(os.path.join(os.environ.get("OUT", "."), "probe_cust7a_unet.json"), "w") as f:
    json.dump(result, f, indent=1)
