"""What three ops the estimator does not trace keep for backward (helper under11, issue #13).

Rows (each a fresh base: peak stats reset after the inputs exist):
  perceptual_*  a frozen torchvision VGG19 `features[:36]` (weights=None, requires_grad False, on the GPU) run on an
                image that requires grad (a generator's output) and on a target under no_grad, MSE between them, under
                bf16 autocast or fp32; kept_mib = allocated after forward minus before (what backward will read),
                bwd_peak_over_mib = peak during backward over the same base.
  roi_align_*   torchvision.ops.roi_align on a (B, 256, H, W) map that requires grad, R boxes, 7x7, sampling_ratio 2,
                fp16 and fp32; in/out sizes given.
  fftconv_*     y = irfft(rfft(u, n=2L) * rfft(k, n=2L), n=2L)[..., :L] with u (B, H, L) and k (H, L) requiring grad
                (an S4D long convolution), fp32, with and without a bf16 autocast around it (FFT runs fp32 either way).
python probe_under11.py   (prints one JSON line per row; well under 100 s on an H200.)
"""
import gc, json
import torch
import torch.nn.functional as F
import torchvision

MIB = 2 ** 20
dev = "cuda"
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)


def mib(n):
    return round(n / MIB, 2)


def measure(name, make, forward, extra=None):
    gc.collect(); torch.cuda.empty_cache()
    inputs = make()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = forward(*inputs)
    torch.cuda.synchronize()
    kept = torch.cuda.memory_allocated() - base
    fwd_peak = torch.cuda.max_memory_allocated() - base
    torch.cuda.reset_peak_memory_stats()
    out.backward()
    torch.cuda.synchronize()
    bwd = torch.cuda.max_memory_allocated() - base
    row = {"row": name, "kept_mib": mib(kept), "fwd_peak_over_mib": mib(fwd_peak), "bwd_peak_over_mib": mib(bwd)}
    row.update(extra or {})
    print(json.dumps(row), flush=True)
    del inputs, out


vgg = torchvision.models.vgg19(weights=None).features[:36].eval().to(dev)
for p in vgg.parameters():
    p.requires_grad_(False)
print(json.dumps({"row": "vgg_weights", "params": sum(p.numel() for p in vgg.parameters()), "mib": mib(torch.cuda.memory_allocated())}), flush=True)


def perceptual(amp):
    def run(sr, hr):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            with torch.no_grad():
                target = vgg(hr)
            return F.mse_loss(vgg(sr), target)
    return run


for batch, size in [(32, 384), (8, 384), (16, 256)]:
    for amp in (True, False):
        measure(f"perceptual_b{batch}_s{size}_{'bf16' if amp else 'fp32'}",
                lambda: (torch.rand(batch, 3, size, size, device=dev, requires_grad=True), torch.rand(batch, 3, size, size, device=dev)),
                perceptual(amp), {"in_mib": mib(batch * 3 * size * size * 4)})

for dtype in (torch.float16, torch.float32):
    for batch, hw, rois in [(8, 64, 4096), (8, 64, 1024), (2, 100, 4096)]:
        def make(batch=batch, hw=hw, rois=rois, dtype=dtype):
            x = torch.randn(batch, 256, hw, hw, device=dev, dtype=dtype, requires_grad=True)
            xy = torch.rand(rois, 2, device=dev) * (hw - 8)
            wh = torch.rand(rois, 2, device=dev) * 8 + 1
            idx = torch.randint(0, batch, (rois, 1), device=dev).float()
            boxes = torch.cat([idx, xy, xy + wh], 1).to(dtype)
            return x, boxes
        def fwd(x, boxes):
            return torchvision.ops.roi_align(x, boxes, output_size=7, spatial_scale=1.0, sampling_ratio=2, aligned=True).float().square().mean()
        measure(f"roi_align_{str(dtype)[6:]}_b{batch}_hw{hw}_r{rois}", make, fwd,
                {"in_mib": mib(batch * 256 * hw * hw * (2 if dtype == torch.float16 else 4)), "out_mib": mib(rois * 256 * 49 * (2 if dtype == torch.float16 else 4))})

for batch, h, L in [(16, 256, 4096), (8, 256, 4096), (16, 128, 1024)]:
    for amp in (False, True):
        def make(batch=batch, h=h, L=L):
            return torch.randn(batch, h, L, device=dev, requires_grad=True), torch.randn(h, L, device=dev, requires_grad=True)
        def fwd(u, k, L=L, amp=amp):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                y = torch.fft.irfft(torch.fft.rfft(u, n=2 * L) * torch.fft.rfft(k, n=2 * L), n=2 * L)[..., :L]
                return (y + u).square().mean()
        measure(f"fftconv_b{batch}_h{h}_L{L}_{'amp' if amp else 'fp32'}", make, fwd, {"in_mib": mib(batch * h * L * 4)})
