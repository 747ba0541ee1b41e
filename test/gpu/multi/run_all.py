#!/usr/bin/env python3
"""Runs every multi-GPU training script under every strategy with torchrun and writes one results table.

    python3 test/gpu/multi/run_all.py --nproc 2 --out /tmp/multi          (on a machine with 2 GPUs)
    python3 test/gpu/multi/run_all.py --nproc 1 --jobs 4 --out /tmp/multi (world size 1: a dry run on one GPU)

Each launch is `torchrun --standalone --nproc_per_node N scripts/SCRIPT --strategy S --out OUT/ranks`; its log goes
to OUT/logs/. The table (OUT/results.md and OUT/results.json) has, per script and strategy, the largest per-rank
peak of torch.cuda.max_memory_allocated() and, from predictions.json (predict.mjs), what `oomguard estimate
--gpus N --strategy ...` predicted for the same script. DeepSpeed rows are skipped, not failed, where
deepspeed is not importable. --jobs > 1 runs launches side by side; only for world-size-1 dry runs on a large
GPU, since each process's peak counter is its own but the GPU's memory is shared.
"""
import argparse
import glob
import importlib.util
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = {'gpt2_medium': 'train_gpt2_medium.py', 'llama_1b': 'train_llama_1b.py'}
STRATEGIES = ['ddp', 'fsdp_full', 'fsdp_grad_op', 'zero2', 'zero3']
DEEPSPEED_STRATEGIES = ('zero2', 'zero3')
ESTIMATOR_STRATEGY = {'ddp': 'ddp', 'fsdp_full': 'fsdp', 'fsdp_grad_op': 'zero2', 'zero2': 'zero2', 'zero3': 'zero3'}
# NVLink multicast stays off in every child (a program that uses it can take a shared host's GPUs out of service).
MULTICAST_OFF = {'NCCL_NVLS_ENABLE': '0', 'TORCH_SYMM_MEM_DISABLE_MULTICAST': '1', 'NVSHMEM_DISABLE_NVLS': '1'}
MIB = 1024.0 * 1024.0


def log(*a):
    print('[%6.1fs]' % (time.time() - T0), *a, flush=True)


def launch(job, args):
    config, strategy = job
    name = '%s__%s__ws%d' % (config, strategy, args.nproc)
    log_path = os.path.join(args.out, 'logs', name + '.log')
    # `python -m torch.distributed.run` is torchrun, found through the interpreter that has torch.
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', str(args.nproc),
           os.path.join(HERE, 'scripts', SCRIPTS[config]), '--strategy', strategy,
           '--out', os.path.join(args.out, 'ranks'), '--steps', str(args.steps)]
    env = dict(os.environ, PYTHONUNBUFFERED='1', **MULTICAST_OFF)
    t0 = time.time()
    log('start', name)
    with open(log_path, 'w') as out:
        out.write(' '.join(cmd) + '\n')
        out.flush()
        try:
            rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = 'timeout after %ds' % args.timeout
    log('done ', name, 'rc', rc, '%.1fs' % (time.time() - t0))
    return dict(config=config, strategy=strategy, rc=rc, wall_s=round(time.time() - t0, 1), log=os.path.relpath(log_path, args.out))


def load_predictions(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f).get('configs', {})


def row_for(launch_result, args, predictions):
    config, strategy = launch_result['config'], launch_result['strategy']
    pattern = os.path.join(args.out, 'ranks', '%s__%s__ws%d__rank*.json' % (config, strategy, args.nproc))
    ranks = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            ranks.append(json.load(f))
    row = dict(config=config, strategy=strategy, estimator_strategy=ESTIMATOR_STRATEGY[strategy], world_size=args.nproc,
               rc=launch_result['rc'], wall_s=launch_result['wall_s'], log=launch_result['log'], ranks=len(ranks))
    statuses = {r['status'] for r in ranks}
    if launch_result.get('skipped'):
        row['status'] = 'skipped'
        row['reason'] = launch_result['skipped']
    elif ranks and statuses == {'skipped'}:
        row['status'] = 'skipped'
        row['reason'] = ranks[0].get('reason')
    elif len(ranks) == args.nproc and statuses == {'ok'} and launch_result['rc'] == 0:
        row['status'] = 'ok'
        row['peak_alloc'] = max(r['peak_alloc'] for r in ranks)
        row['peak_alloc_per_rank'] = [r['peak_alloc'] for r in ranks]
        row['peak_reserved'] = max(r['peak_reserved'] for r in ranks)
        row['alloc_at_start'] = max(r['alloc_at_start'] for r in ranks)
        row['peak_phase'] = ranks[0]['peak_phase']
        row['parameters'] = ranks[0].get('parameters')
        row['losses_rank0'] = ranks[0]['losses']
    else:
        row['status'] = 'error'
        errors = [r.get('error') for r in ranks if r.get('error')]
        row['reason'] = errors[0] if errors else 'rc %s, %d of %d rank records' % (launch_result['rc'], len(ranks), args.nproc)
    predicted = predictions.get(config, {}).get(strategy, {}).get(str(args.nproc))
    if predicted:
        row['predicted_peak_alloc'] = predicted['peakAllocated']
        row['predicted_phase'] = predicted['peakPhase']
        if 'peak_alloc' in row:
            row['error_pct'] = round(100.0 * (predicted['peakAllocated'] - row['peak_alloc']) / row['peak_alloc'], 1)
    return row


def table(rows):
    lines = ['| config | strategy (estimator) | world size | measured peak (MiB) | phase | predicted (MiB) | phase | error |',
             '|---|---|---|---|---|---|---|---|']
    for r in rows:
        measured = '%.1f' % (r['peak_alloc'] / MIB) if r['status'] == 'ok' else '%s: %s' % (r['status'], r.get('reason', ''))
        predicted = '%.1f' % (r['predicted_peak_alloc'] / MIB) if 'predicted_peak_alloc' in r else 'none'
        error = '%+.1f%%' % r['error_pct'] if 'error_pct' in r else ''
        lines.append('| %s | %s (%s) | %d | %s | %s | %s | %s | %s |' % (
            r['config'], r['strategy'], r['estimator_strategy'], r['world_size'], measured.replace('|', '/'),
            r.get('peak_phase', ''), predicted, r.get('predicted_phase', ''), error))
    return '\n'.join(lines) + '\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nproc', type=int, default=2, help='processes (GPUs) per launch, torchrun --nproc_per_node')
    parser.add_argument('--out', required=True)
    parser.add_argument('--jobs', type=int, default=1, help='launches side by side (world-size-1 dry runs only)')
    parser.add_argument('--steps', type=int, default=3)
    parser.add_argument('--timeout', type=int, default=600, help='seconds per launch')
    parser.add_argument('--configs', default=','.join(SCRIPTS))
    parser.add_argument('--strategies', default=','.join(STRATEGIES))
    parser.add_argument('--predictions', default=os.path.join(HERE, 'predictions.json'))
    args = parser.parse_args()
    configs = [c for c in args.configs.split(',') if c]
    strategies = [s for s in args.strategies.split(',') if s]
    unknown = [c for c in configs if c not in SCRIPTS] + [s for s in strategies if s not in STRATEGIES]
    if unknown:
        sys.exit('unknown config or strategy: %s (configs: %s; strategies: %s)' % (
            ', '.join(unknown), ', '.join(SCRIPTS), ', '.join(STRATEGIES)))
    if args.jobs > 1 and args.nproc > 1:
        sys.exit('--jobs > 1 is for world-size-1 dry runs only: launches of several ranks would share GPUs')
    os.makedirs(os.path.join(args.out, 'logs'), exist_ok=True)
    os.makedirs(os.path.join(args.out, 'ranks'), exist_ok=True)
    has_deepspeed = importlib.util.find_spec('deepspeed') is not None
    log('deepspeed importable:', has_deepspeed, '| world size', args.nproc, '| jobs', args.jobs)

    jobs, results = [], []
    for config in configs:
        for strategy in strategies:
            if strategy in DEEPSPEED_STRATEGIES and not has_deepspeed:
                results.append(dict(config=config, strategy=strategy, rc=None, wall_s=0, log='',
                                    skipped='deepspeed is not importable'))
            else:
                jobs.append((config, strategy))
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results += list(pool.map(lambda job: launch(job, args), jobs))

    predictions = load_predictions(args.predictions)
    order = {(c, s): i for i, (c, s) in enumerate((c, s) for c in configs for s in strategies)}
    rows = sorted((row_for(r, args, predictions) for r in results), key=lambda r: order[(r['config'], r['strategy'])])
    meta = dict(world_size=args.nproc, jobs=args.jobs, steps=args.steps, deepspeed=has_deepspeed,
                date_utc=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), total_s=round(time.time() - T0, 1))
    try:
        import torch
        meta.update(torch=torch.__version__, gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                    gpus=torch.cuda.device_count())
    except ImportError:
        pass
    with open(os.path.join(args.out, 'results.json'), 'w') as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    md = table(rows)
    with open(os.path.join(args.out, 'results.md'), 'w') as f:
        f.write(md)
    print(md, flush=True)
    failed = [r for r in rows if r['status'] == 'error']
    sys.exit(1 if failed else 0)


T0 = time.time()
if __name__ == '__main__':
    main()
