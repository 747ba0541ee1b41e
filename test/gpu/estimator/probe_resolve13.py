"""Parameters and memory of timm's HRNet and BiT (ResNetV2 ..x.._bit) families (helper resolve13, issue #13).

Rows:
  params        parameter count of a model built with its defaults (no weights; num_classes as create_model gives
                it, and with num_classes=1000), for each name and for the `.goog_in21k` tags.
  step_*        one training step, the second of two (AdamW), a fresh base each: kept_mib = allocated after forward
                minus before (what backward will read), fwd_peak_over_mib / bwd_peak_over_mib = peaks over that base.
python probe_resolve13.py   (prints one JSON line per row; under 90 s on an H200.)
"""
import gc, json, time
import torch
import torch.nn.functional as F
import timm

MIB = 2 ** 20
dev = "cuda"
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)
t_start = time.time()


def mib(n):
    return round(n / MIB, 2)


def count(m):
    return sum(p.numel() for p in m.parameters())


def emit(row):
    print(json.dumps(row), flush=True)


emit({"row": "versions", "torch": torch.__version__, "timm": timm.__version__})
NAMES = ["hrnet_w18_small", "hrnet_w18_small_v2", "hrnet_w18", "hrnet_w30", "hrnet_w32", "hrnet_w40", "hrnet_w44",
         "hrnet_w48", "hrnet_w64", "resnetv2_50x1_bit", "resnetv2_50x3_bit", "resnetv2_101x1_bit",
         "resnetv2_101x3_bit", "resnetv2_152x2_bit", "resnetv2_50x1_bit.goog_in21k", "resnetv2_101x3_bit.goog_in21k"]
for name in NAMES:
    try:
        with torch.device("meta"):
            m = timm.create_model(name, pretrained=False)
            m1k = timm.create_model(name, pretrained=False, num_classes=1000)
            m21 = timm.create_model(name, pretrained=False, num_classes=21)
        emit({"row": "params", "model": name, "params": count(m), "num_classes": m.num_classes,
              "params_1000": count(m1k), "params_21": count(m21)})
        del m, m1k, m21
    except Exception as e:  # noqa: BLE001
        emit({"row": "params", "model": name, "error": repr(e)[:200]})


def step_rows(name, batch, size, amp=None, num_classes=21):
    rec = {"row": f"step_{name}", "batch": batch, "size": size, "amp": str(amp), "num_classes": num_classes}
    try:
        gc.collect(); torch.cuda.empty_cache()
        model = timm.create_model(name, pretrained=False, num_classes=num_classes).to(dev)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for i in range(2):
            x = torch.randn(batch, 3, size, size, device=dev)
            y = torch.randint(0, num_classes, (batch,), device=dev)
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            if i == 1:
                rec["base_mib"] = mib(base)
                torch.cuda.reset_peak_memory_stats()
            with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
                out = model(x)
                loss = F.cross_entropy(out, y)
            torch.cuda.synchronize()
            kept = torch.cuda.memory_allocated() - base
            fwd = torch.cuda.max_memory_allocated() - base
            if i == 1:
                torch.cuda.reset_peak_memory_stats()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.cuda.synchronize()
            bwd = torch.cuda.max_memory_allocated() - base
            opt.step()
            del out, loss
            if i == 1:
                rec.update({"kept_mib": mib(kept), "fwd_peak_over_mib": mib(fwd), "bwd_peak_over_mib": mib(bwd)})
            del x, y
        rec["params"] = count(model)
        del model, opt
    except Exception as e:  # noqa: BLE001
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t_start, 1)
    emit(rec)


for name, batch, size, amp in [("hrnet_w18", 32, 224, None), ("hrnet_w18", 32, 224, torch.bfloat16),
                               ("hrnet_w18_small", 32, 224, None), ("hrnet_w32", 16, 256, None), ("hrnet_w48", 16, 224, None),
                               ("hrnet_w18_small_v2", 16, 224, torch.float16),
                               ("resnetv2_50x1_bit", 32, 224, None), ("resnetv2_50x1_bit", 32, 224, torch.float16),
                               ("resnetv2_50x1_bit", 48, 320, torch.float16), ("resnetv2_101x1_bit", 16, 224, None),
                               ("resnetv2_50x3_bit", 8, 224, None)]:
    if time.time() - t_start > 80:
        break
    step_rows(name, batch, size, amp)
