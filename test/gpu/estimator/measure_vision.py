"""Catalog vision families measured on the GPU: parameter counts and the peak of a training step (AdamW, 3 steps,
max_memory_allocated) for timm and torchvision Swin and RegNet models, fp32 and bf16 autocast, two batch sizes.
The estimator's builders for these families are checked against this file (test/estimator/catalog.test.ts).

Run: python measure_vision.py --out DIR   (writes DIR/vision.json)
"""
import argparse
import gc
import json

import timm
import torch
import torch.nn.functional as F
import torchvision

MODELS = [
    ('timm', 'swin_tiny_patch4_window7_224'), ('timm', 'swin_small_patch4_window7_224'), ('timm', 'swin_base_patch4_window7_224'),
    ('torchvision', 'swin_t'), ('torchvision', 'swin_s'), ('torchvision', 'swin_b'),
    ('torchvision', 'regnet_y_400mf'), ('torchvision', 'regnet_y_1_6gf'), ('torchvision', 'regnet_y_8gf'),
    ('torchvision', 'regnet_x_400mf'), ('torchvision', 'regnet_x_3_2gf'),
    ('timm', 'regnety_040'), ('timm', 'regnetx_032'),
]


def build(source, name, classes):
    if source == 'timm':
        return timm.create_model(name, pretrained=False, num_classes=classes)
    return getattr(torchvision.models, name)(num_classes=classes)


def step_peaks(model, batch, amp):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    peaks = []
    for _ in range(3):
        x = torch.randn(batch, 3, 224, 224, device='cuda')
        y = torch.randint(0, 10, (batch,), device='cuda')
        torch.cuda.reset_peak_memory_stats()
        with torch.autocast('cuda', dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        peaks.append(torch.cuda.max_memory_allocated())
    del opt
    return peaks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--out', required=True)
    args = parser.parse_args()
    runs = []
    for source, name in MODELS:
        for classes in (1000,):
            params = sum(p.numel() for p in build(source, name, classes).parameters())
        for batch in (32, 64):
            for amp in (False, True):
                gc.collect()
                torch.cuda.empty_cache()
                model = build(source, name, 10).cuda().train()
                try:
                    peaks = step_peaks(model, batch, amp)
                    row = {'source': source, 'model': name, 'params_1000_classes': params,
                           'params_10_classes': sum(p.numel() for p in model.parameters()), 'batch': batch,
                           'precision': 'bf16-amp' if amp else 'fp32', 'optimizer': 'adamw', 'image': 224, 'step_peaks': peaks}
                except Exception as error:  # noqa: BLE001 - recorded, the run goes on
                    row = {'source': source, 'model': name, 'batch': batch, 'amp': amp, 'error': repr(error)[:300]}
                del model
                runs.append(row)
                print(json.dumps(row), flush=True)
    with open(f'{args.out}/vision.json', 'w') as f:
        json.dump({'device': torch.cuda.get_device_name(0), 'torch': torch.__version__, 'timm': timm.__version__,
                   'torchvision': torchvision.__version__, 'runs': runs}, f, indent=1)


if __name__ == '__main__':
    main()
