"""What cross_entropy on a language model's logits keeps after forward and takes on top during backward, per
precision: the logits are a leaf of shape (N, V) standing for the head's output (the script keeps them, as
`logits, loss = model(x, y)` does); we record, in MiB and in units of the logits' fp32 size:
  kept: allocated after the loss's forward minus before (what the graph saves);
  transient: backward's peak minus the allocation just before backward;
  after: allocated after backward minus before backward (the logits' gradient, kept for the head's backward).
Usage: python3 measure_cross_entropy.py OUT.json
"""
import json
import sys

import torch
import torch.nn.functional as F

MIB = 1024 * 1024


def case(n, v, logits_dtype, autocast, reduction='mean', smoothing=0.0):
    torch.cuda.empty_cache()
    z = torch.randn(n, v, device='cuda', dtype=logits_dtype, requires_grad=True)
    t = torch.randint(0, v, (n,), device='cuda')
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    with torch.autocast('cuda', dtype=autocast, enabled=autocast is not None):
        loss = F.cross_entropy(z, t, reduction=reduction, label_smoothing=smoothing)
        if reduction == 'none':
            loss = loss.mean()
    torch.cuda.synchronize()
    kept = torch.cuda.memory_allocated() - before
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    loss.backward()
    torch.cuda.synchronize()
    transient = torch.cuda.max_memory_allocated() - start
    after = torch.cuda.memory_allocated() - start
    unit = n * v * 4
    name = {None: 'none', torch.float16: 'fp16', torch.bfloat16: 'bf16'}
    return dict(n=n, v=v, logits=str(logits_dtype).replace('torch.', ''), autocast=name[autocast], reduction=reduction,
                smoothing=smoothing, kept_mib=kept / MIB, transient_mib=transient / MIB, after_mib=after / MIB,
                kept_fp32=kept / unit, transient_fp32=transient / unit, after_fp32=after / unit)


def main():
    rows = []
    for n, v in [(12 * 1024, 50304), (32 * 512, 8192), (8 * 256, 32000)]:
        for logits_dtype, autocast in [(torch.float32, None), (torch.float16, torch.float16), (torch.bfloat16, torch.bfloat16),
                                       (torch.float32, torch.float16), (torch.float32, torch.bfloat16), (torch.bfloat16, None)]:
            for reduction, smoothing in [('mean', 0.0), ('none', 0.0), ('mean', 0.1)]:
                r = case(n, v, logits_dtype, autocast, reduction, smoothing)
                rows.append(r)
                print(json.dumps(r), flush=True)
    json.dump({'device': torch.cuda.get_device_name(), 'torch': torch.__version__, 'rows': rows}, open(sys.argv[1], 'w'), indent=0)


if __name__ == '__main__':
    main()
