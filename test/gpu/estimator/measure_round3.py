#!/usr/bin/env python3
"""Mechanisms the held-out estimator set pointed at (test/gpu/holdout), measured one at a time:

1. cudnn.benchmark: how much the first step's algorithm search adds to the peak, whether later steps keep it, and
   whether it shrinks when less memory is free (a memory cap stands in for a smaller GPU).
2. Autocast in inference: whether a no_grad forward under autocast keeps half copies of the fp32 weights
   (requires_grad left on, as after model.eval()) and whether requires_grad_(False) removes them.
3. Two models trained in one loop (a GAN): the peak against each model's own.
4. A GRU/LSTM under cuDNN: the peak against the tensors the estimator counts.

Each measurement runs in a fresh subprocess so the allocator starts empty.
Run on a CUDA machine:  python3 measure_round3.py --out OUTDIR   (writes OUTDIR/round3.json)
"""
import argparse
import json
import subprocess
import sys
import time

CASES = []


def case(fn):
    CASES.append(fn.__name__)
    return fn


def mib(x):
    return round(x / 2**20, 1)


def resnet18_cifar():
    import torch.nn as nn
    import torchvision
    model = torchvision.models.resnet18(num_classes=10)
    model.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    model.maxpool = nn.Identity()
    return model


def train_steps(model, batch, shape, steps=3, classes=10, benchmark=False, cap=None):
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = benchmark
    if cap:
        torch.cuda.set_per_process_memory_fraction(cap)
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    peaks = []
    for _ in range(steps):
        torch.cuda.reset_peak_memory_stats()
        x = torch.randn(batch, *shape, device='cuda')
        y = torch.randint(0, classes, (batch,), device='cuda')
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        peaks.append(torch.cuda.max_memory_allocated())
    return {'step_peaks_mib': [mib(p) for p in peaks], 'params': sum(p.numel() for p in model.parameters())}


@case
def cudnn_benchmark():
    import torchvision
    out = {}
    for name, make, batch, shape in [
        ('resnet18_cifar_b1024', resnet18_cifar, 1024, (3, 32, 32)),
        ('resnet18_cifar_b256', resnet18_cifar, 256, (3, 32, 32)),
        ('resnet18_224_b128', lambda: torchvision.models.resnet18(num_classes=10), 128, (3, 224, 224)),
        ('resnet50_224_b64', lambda: torchvision.models.resnet50(num_classes=10), 64, (3, 224, 224)),
    ]:
        for benchmark, cap in [(False, None), (True, None), (True, 0.12)]:
            key = f'{name}/benchmark={benchmark}' + (f'/cap={cap}' if cap else '')
            out[key] = run_sub('train', name=name, benchmark=benchmark, cap=cap, batch=batch, shape=list(shape))
    return out


@case
def autocast_inference():
    out = {}
    for amp in (False, True):
        for frozen in (False, True):
            out[f'vit_l_16_b256/amp={amp}/requires_grad_off={frozen}'] = run_sub('infer', amp=amp, frozen=frozen)
    return out


@case
def gan_two_models():
    return {'dcgan128_b256': run_sub('gan')}


@case
def recurrent():
    out = {}
    for cell in ('GRU', 'LSTM'):
        for bidirectional in (False, True):
            out[f'{cell}/bi={bidirectional}'] = run_sub('rnn', cell=cell, bidirectional=bidirectional)
    return out


def run_sub(kind, **kw):
    proc = subprocess.run([sys.executable, __file__, '--child', json.dumps({'kind': kind, **kw})],
                          capture_output=True, text=True, timeout=300)
    for line in proc.stdout.splitlines():
        if line.startswith('CHILD '):
            return json.loads(line[6:])
    return {'error': proc.stderr[-2000:]}


def child(spec):
    import torch
    import torch.nn as nn
    import torchvision
    kind = spec['kind']
    if kind == 'train':
        makers = {
            'resnet18_cifar_b1024': resnet18_cifar, 'resnet18_cifar_b256': resnet18_cifar,
            'resnet18_224_b128': lambda: torchvision.models.resnet18(num_classes=10),
            'resnet50_224_b64': lambda: torchvision.models.resnet50(num_classes=10),
        }
        return train_steps(makers[spec['name']](), spec['batch'], tuple(spec['shape']), benchmark=spec['benchmark'], cap=spec['cap'])
    if kind == 'infer':
        model = torchvision.models.vit_l_16().cuda().eval()
        if spec['frozen']:
            model.requires_grad_(False)
        weights = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        ctx = torch.autocast('cuda', dtype=torch.bfloat16) if spec['amp'] else torch.autocast('cuda', enabled=False)
        with torch.no_grad(), ctx:
            for _ in range(2):
                logits = model(torch.randn(256, 3, 224, 224, device='cuda'))
                top5 = logits.float().softmax(-1).topk(5, dim=-1).indices
        torch.cuda.synchronize()
        return {'weights_mib': mib(weights), 'peak_mib': mib(torch.cuda.max_memory_allocated()),
                'after_mib': mib(torch.cuda.memory_allocated()), 'params': sum(p.numel() for p in model.parameters())}
    if kind == 'gan':
        def g():
            layers = [nn.ConvTranspose2d(100, 1024, 4, 1, 0, bias=False), nn.BatchNorm2d(1024), nn.ReLU(True)]
            c = 1024
            for _ in range(4):
                layers += [nn.ConvTranspose2d(c, c // 2, 4, 2, 1, bias=False), nn.BatchNorm2d(c // 2), nn.ReLU(True)]
                c //= 2
            layers += [nn.ConvTranspose2d(64, 3, 4, 2, 1, bias=False), nn.Tanh()]
            return nn.Sequential(*layers)

        def d():
            layers = [nn.Conv2d(3, 64, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
            c = 64
            for _ in range(4):
                layers += [nn.Conv2d(c, c * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(c * 2), nn.LeakyReLU(0.2, inplace=True)]
                c *= 2
            layers += [nn.Conv2d(c, 1, 4, 1, 0, bias=False)]
            return nn.Sequential(*layers)
        netG, netD = g().cuda(), d().cuda()
        optG = torch.optim.Adam(netG.parameters(), 2e-4, betas=(0.5, 0.999))
        optD = torch.optim.Adam(netD.parameters(), 2e-4, betas=(0.5, 0.999))
        crit = nn.BCEWithLogitsLoss()
        phases = {}

        def mark(name):
            torch.cuda.synchronize()
            phases[name] = max(phases.get(name, 0), mib(torch.cuda.max_memory_allocated()))
            torch.cuda.reset_peak_memory_stats()
        for _ in range(3):
            real = torch.rand(256, 3, 128, 128, device='cuda') * 2 - 1
            netD.zero_grad()
            label = torch.ones(256, device='cuda')
            crit(netD(real).view(-1), label).backward()
            mark('d_real')
            fake = netG(torch.randn(256, 100, 1, 1, device='cuda'))
            label.fill_(0)
            crit(netD(fake.detach()).view(-1), label).backward()
            optD.step()
            mark('d_fake')
            netG.zero_grad()
            label.fill_(1)
            crit(netD(fake).view(-1), label).backward()
            optG.step()
            mark('g_step')
        return {'phases_mib': phases, 'paramsG': sum(p.numel() for p in netG.parameters()),
                'paramsD': sum(p.numel() for p in netD.parameters())}
    if kind == 'rnn':
        rnn = getattr(nn, spec['cell'])(128, 512, num_layers=2, batch_first=True, bidirectional=spec['bidirectional']).cuda()
        head = nn.Linear(512 * (2 if spec['bidirectional'] else 1), 1).cuda()
        opt = torch.optim.Adam(list(rnn.parameters()) + list(head.parameters()))
        x = torch.randn(256, 336, 128, device='cuda')
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        for _ in range(3):
            out, _h = rnn(x)
            after_forward = torch.cuda.memory_allocated()
            loss = head(out).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        return {'base_mib': mib(base), 'after_forward_mib': mib(after_forward), 'peak_mib': mib(torch.cuda.max_memory_allocated()),
                'output_mib': mib(out.numel() * 4), 'params': sum(p.numel() for p in rnn.parameters())}
    raise ValueError(kind)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--out')
    parser.add_argument('--child')
    args = parser.parse_args()
    if args.child:
        print('CHILD ' + json.dumps(child(json.loads(args.child))), flush=True)
        return
    import torch
    results = {'device': torch.cuda.get_device_name(0), 'torch': torch.__version__}
    for name in CASES:
        t0 = time.time()
        results[name] = globals()[name]()
        print(name, round(time.time() - t0, 1), 's', json.dumps(results[name]), flush=True)
    with open(f'{args.out}/round3.json', 'w') as f:
        json.dump(results, f, indent=1)


if __name__ == '__main__':
    main()
