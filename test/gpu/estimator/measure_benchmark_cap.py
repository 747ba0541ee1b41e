"""Does cudnn.benchmark's first-step algorithm search run a GPU with little free memory out of memory, or back
off? The CIFAR ResNet-18 of measure_round3.py at batch 1024 (steady peak 4.9 GiB, first step 13.4 GiB on a free
H200) is trained with the caching allocator capped at a few sizes between the two.

Run: python measure_benchmark_cap.py --out DIR   (writes DIR/benchmark_cap.json)
"""
import argparse
import json
import subprocess
import sys

from measure_round3 import train_steps, resnet18_cifar  # noqa: E402  (same model, same step)

H200_BYTES = None


def child(cap):
    import torch
    total = torch.cuda.get_device_properties(0).total_memory
    try:
        out = train_steps(resnet18_cifar(), 1024, (3, 32, 32), benchmark=True, cap=cap)
        out['oom'] = False
    except torch.cuda.OutOfMemoryError as error:
        out = {'oom': True, 'error': str(error)[:300]}
    out['cap_gib'] = round(cap * total / 2**30, 2)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--out')
    parser.add_argument('--child', type=float)
    args = parser.parse_args()
    if args.child is not None:
        print('CHILD ' + json.dumps(child(args.child)), flush=True)
        return
    results = {}
    for cap in (0.045, 0.06, 0.08):
        proc = subprocess.run([sys.executable, __file__, '--child', str(cap)], capture_output=True, text=True, timeout=300)
        line = next((l for l in proc.stdout.splitlines() if l.startswith('CHILD ')), None)
        results[str(cap)] = json.loads(line[6:]) if line else {'error': proc.stderr[-1000:]}
        print(cap, results[str(cap)], flush=True)
    with open(f'{args.out}/benchmark_cap.json', 'w') as f:
        json.dump(results, f, indent=1)


if __name__ == '__main__':
    main()
