"""cuDNN recurrent layers on the GPU: what forward keeps (reserve space) and what backward takes on top, across
batch, hidden size, sequence length, layers, direction and dropout, for LSTM, GRU and tanh RNN.

Run: python measure_rnn.py --out DIR   (writes DIR/rnn.json). Units in the output: bytes, and "per unit", where
a unit is batch x seq x hidden x layers x directions fp32 values (4 bytes each).
"""
import argparse
import itertools
import json

import torch
import torch.nn as nn


def measure(cell, batch, hidden, seq, layers, bidirectional, dropout, inp=128):
    torch.cuda.empty_cache()
    rnn = getattr(nn, cell)(inp, hidden, num_layers=layers, batch_first=True, bidirectional=bidirectional, dropout=dropout).cuda()
    x = torch.randn(batch, seq, inp, device='cuda', requires_grad=False)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out, h = rnn(x)
    torch.cuda.synchronize()
    forward_peak = torch.cuda.max_memory_allocated() - base
    after = torch.cuda.memory_allocated() - base
    kept_outputs = out.numel() * 4 + sum(t.numel() * 4 for t in (h if isinstance(h, tuple) else (h,)))
    torch.cuda.reset_peak_memory_stats()
    out.sum().backward()
    torch.cuda.synchronize()
    backward_extra = torch.cuda.max_memory_allocated() - base - after
    dirs = 2 if bidirectional else 1
    unit = batch * seq * hidden * layers * dirs * 4
    result = {
        'cell': cell, 'batch': batch, 'hidden': hidden, 'seq': seq, 'layers': layers, 'dirs': dirs, 'dropout': dropout,
        'reserve_bytes': after - kept_outputs, 'forward_peak_bytes': forward_peak, 'backward_extra_bytes': backward_extra,
        'reserve_per_unit': round((after - kept_outputs) / unit, 3), 'backward_extra_per_unit': round(backward_extra / unit, 3),
    }
    del rnn, x, out, h
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--out', required=True)
    args = parser.parse_args()
    rows = []
    for cell, batch, hidden, seq, layers, bi, dropout in itertools.product(
            ('LSTM', 'GRU', 'RNN'), (16, 64, 256), (128, 512, 1024), (64, 336), (1, 2), (False, True), (0.0, 0.3)):
        if layers == 1 and dropout:
            continue
        try:
            rows.append(measure(cell, batch, hidden, seq, layers, bi, dropout))
        except torch.cuda.OutOfMemoryError:
            rows.append({'cell': cell, 'batch': batch, 'hidden': hidden, 'seq': seq, 'layers': layers, 'bidirectional': bi, 'oom': True})
        print(json.dumps(rows[-1]), flush=True)
    with open(f'{args.out}/rnn.json', 'w') as f:
        json.dump({'device': torch.cuda.get_device_name(0), 'torch': torch.__version__, 'cudnn': torch.backends.cudnn.version(), 'runs': rows}, f, indent=1)


if __name__ == '__main__':
    main()
