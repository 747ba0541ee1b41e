"""How much memory cuDNN's algorithm search (torch.backends.cudnn.benchmark = True) takes, per convolution shape.

For each Conv2d shape (batch, in/out channels, image size, kernel, stride, dtype) the first forward and backward
with a new shape search the algorithms and allocate the largest workspace any candidate asks for (as much as is
free); the second call with the same shape uses the chosen algorithm. We record, for forward and for backward:
  search_mib: the peak above what is alive after the call, on the first call (the search);
  steady_mib: the same on the second call (the chosen algorithm's workspace);
  default_mib: the same with benchmark off (cuDNN's heuristics), in a separate pass.
Then whole models (ResNet-18 CIFAR-style and torchvision ResNet-18/50) with a forward pre/post hook on each conv, so
the first step's peak can be compared with "live memory at the conv + that conv's search".

Usage: python3 measure_cudnn_search.py OUT.json grid DTYPE on|off   (DTYPE: fp32 fp16 bf16)
       python3 measure_cudnn_search.py OUT.json models
Each in its own process: cuDNN caches the chosen algorithm per shape for the life of the process.
"""
import json
import sys

import torch
import torch.nn as nn

MIB = 1024 * 1024
DTYPES = {'fp32': torch.float32, 'fp16': torch.float16, 'bf16': torch.bfloat16}

# (in, out, size, kernel, stride): the convolutions of ResNets at CIFAR and ImageNet sizes, and a few others.
SHAPES = [
    (3, 64, 32, 3, 1), (64, 64, 32, 3, 1), (64, 128, 32, 3, 2), (128, 128, 16, 3, 1), (256, 256, 8, 3, 1),
    (512, 512, 4, 3, 1), (64, 128, 32, 1, 2),
    (3, 64, 224, 7, 2), (64, 64, 56, 3, 1), (64, 256, 56, 1, 1), (256, 64, 56, 1, 1), (128, 128, 28, 3, 1),
    (256, 256, 14, 3, 1), (512, 512, 7, 3, 1), (1024, 256, 14, 1, 1),
    (32, 32, 128, 3, 1), (16, 16, 256, 3, 1),
]
BATCHES = [16, 64, 256, 1024]


def one(batch, cin, cout, size, k, s, dtype):
    torch.cuda.empty_cache()
    conv = nn.Conv2d(cin, cout, k, s, padding=k // 2, bias=False).cuda().to(dtype)
    x = torch.randn(batch, cin, size, size, device='cuda', dtype=dtype, requires_grad=True)
    rec = {}
    for call in ('first', 'second'):
        x.grad = None
        conv.weight.grad = None
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        y = conv(x)
        torch.cuda.synchronize()
        rec[f'fwd_{call}_mib'] = (torch.cuda.max_memory_allocated() - torch.cuda.memory_allocated()) / MIB
        g = torch.ones_like(y)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        y.backward(g)
        torch.cuda.synchronize()
        rec[f'bwd_{call}_mib'] = (torch.cuda.max_memory_allocated() - torch.cuda.memory_allocated()) / MIB
        del y, g
    rec['input_mib'] = x.numel() * x.element_size() / MIB
    out_size = (size + 2 * (k // 2) - k) // s + 1
    rec['output_mib'] = batch * cout * out_size * out_size * x.element_size() / MIB
    del x, conv
    return rec


def grid(dname, benchmark):
    out = []
    torch.backends.cudnn.benchmark = benchmark
    for (cin, cout, size, k, s) in SHAPES:
        for batch in BATCHES:
            if batch * max(cin, cout) * size * size > 1024 * 64 * 224 * 224 // 2:
                continue
            try:
                rec = one(batch, cin, cout, size, k, s, DTYPES[dname])
            except torch.OutOfMemoryError as e:
                rec = {'error': str(e)[:200]}
            rec.update(dict(dtype=dname, benchmark=benchmark, batch=batch, cin=cin, cout=cout, size=size, k=k, s=s))
            out.append(rec)
            print(json.dumps(rec), flush=True)
    return out


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        o = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(o)) + self.short(x))


def cifar_resnet18():
    layers = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


def model_timeline(name, make, batch, size):
    """First and second training step with a hook on every conv: live memory before it and its forward peak."""
    torch.backends.cudnn.benchmark = True
    torch.cuda.empty_cache()
    model = make().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 3, size, size, device='cuda')
    t = torch.randint(0, 10, (batch,), device='cuda')
    steps = []
    for step in range(3):
        convs = []

        def pre(mod, inp):
            torch.cuda.synchronize()
            mod._live = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()

        def post(mod, inp, out):
            torch.cuda.synchronize()
            convs.append(dict(live_mib=mod._live / MIB, peak_mib=torch.cuda.max_memory_allocated() / MIB,
                              cin=mod.in_channels, cout=mod.out_channels, k=mod.kernel_size[0], s=mod.stride[0],
                              size=inp[0].shape[-1]))

        hooks = []
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                hooks += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
        torch.cuda.synchronize()
        out = model(x)
        for h in hooks:
            h.remove()
        loss = nn.functional.cross_entropy(out, t)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before_bwd = torch.cuda.memory_allocated()
        loss.backward()
        torch.cuda.synchronize()
        bwd_peak = torch.cuda.max_memory_allocated()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del out, loss
        steps.append(dict(convs=convs, before_backward_mib=before_bwd / MIB, backward_peak_mib=bwd_peak / MIB))
    return dict(name=name, batch=batch, size=size, steps=steps)


def main():
    out_path, mode = sys.argv[1], sys.argv[2]
    result = {'device': torch.cuda.get_device_name(), 'torch': torch.__version__, 'cudnn': torch.backends.cudnn.version()}
    if mode == 'grid':
        result['grid'] = grid(sys.argv[3], sys.argv[4] == 'on')
    else:
        import torchvision
        result['models'] = [
            model_timeline('cifar_resnet18', cifar_resnet18, 1024, 32),
            model_timeline('cifar_resnet18', cifar_resnet18, 256, 32),
            model_timeline('resnet18', lambda: torchvision.models.resnet18(num_classes=10), 128, 224),
            model_timeline('resnet50', lambda: torchvision.models.resnet50(num_classes=10), 64, 224),
        ]
    with open(out_path, 'w') as f:
        json.dump(result, f, indent=1)


if __name__ == '__main__':
    main()
