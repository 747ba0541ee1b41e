"""Memory of transformers' Swin, ConvNeXt and AST built from their config classes (helper hfcfg12, issue #13): the
estimator models HF Swin/ConvNeXt with the timm/torchvision layer nets (same parameters); this checks their saved
activations against timm's (test/gpu/estimator/results/vision.json) and AST's against the ViT family's.

Rows (one JSON line each): params of each model; then one training step per (model, batch, precision), AdamW,
the second of two steps measured: base_mib = allocated before the step (weights + AdamW state), kept_mib =
allocated after forward minus before (what backward reads), step_peak_mib = max_memory_allocated over the step.
python probe_hfcfg12.py   (under 60 s on an H200.)
"""
import gc, json, time
import torch
import transformers
from transformers import (ASTConfig, ASTForAudioClassification, ConvNextConfig, ConvNextForImageClassification,
                          SwinConfig, SwinForImageClassification)

MIB = 2 ** 20
dev = "cuda"
t0 = time.time()


def emit(row):
    print(json.dumps(row), flush=True)


def count(m):
    return sum(p.numel() for p in m.parameters())


def step(name, make, inputs, batch, amp):
    rec = {"row": name, "batch": batch, "precision": "bf16-amp" if amp else "fp32"}
    try:
        gc.collect(); torch.cuda.empty_cache()
        model = make().to(dev).train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for i in range(2):
            kwargs = inputs(batch)
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                loss = model(**kwargs).loss
            kept = torch.cuda.memory_allocated() - base
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
        rec.update(base_mib=round(base / MIB, 1), kept_mib=round(kept / MIB, 1),
                   step_peak_mib=round(torch.cuda.max_memory_allocated() / MIB, 1), params=count(model))
        del model, opt, loss
    except Exception as e:  # noqa: BLE001
        rec["error"] = repr(e)[:200]
    emit(rec)


emit({"row": "versions", "torch": torch.__version__, "transformers": transformers.__version__})
swin_t = lambda: SwinForImageClassification(SwinConfig(num_labels=10))
swin_s = lambda: SwinForImageClassification(SwinConfig(depths=[2, 2, 18, 2], num_labels=10))
convnext_t = lambda: ConvNextForImageClassification(ConvNextConfig(num_labels=10))
ast = lambda: ASTForAudioClassification(ASTConfig(num_labels=527))
ast_short = lambda: ASTForAudioClassification(ASTConfig(num_labels=527, max_length=512))
images = lambda b: {"pixel_values": torch.randn(b, 3, 224, 224, device=dev), "labels": torch.randint(0, 10, (b,), device=dev)}
spectra = lambda frames: lambda b: {"input_values": torch.randn(b, frames, 128, device=dev),
                                    "labels": (torch.rand(b, 527, device=dev) < 0.01).float()}
for name, make in [("swin_t", swin_t), ("swin_s", swin_s), ("convnext_t", convnext_t), ("ast", ast)]:
    emit({"row": "params", "model": name, "params": count(make())})
for amp in (False, True):
    step("swin_t", swin_t, images, 32, amp)
    step("swin_s", swin_s, images, 64, amp)
    step("convnext_t", convnext_t, images, 64, amp)
    step("ast", ast, spectra(1024), 8, amp)
    step("ast_512", ast_short, spectra(512), 8, amp)
emit({"row": "done", "wall_s": round(time.time() - t0, 1)})
