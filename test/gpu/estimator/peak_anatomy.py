"""What is alive at a script's peak: runs a training script with the CUDA caching allocator's history recorded,
replays the allocations to the moment of the highest total, and prints the largest live blocks there with the
Python frames that allocated them. Used to find which tensors an estimate misses.

Run: python peak_anatomy.py SCRIPT [SCRIPT...] > anatomy.txt
"""
import os
import runpy
import sys
import traceback

import torch


def frames_of(event):
    out = []
    for f in event.get('frames', []):
        name = f.get('filename', '')
        if name.endswith('.py') and 'peak_anatomy' not in name:
            out.append(f"{os.path.basename(name)}:{f.get('line')}:{f.get('name')}")
    return out[:4]


def anatomy(path):
    torch.cuda.memory._record_memory_history(max_entries=400000, stacks='python')
    cwd = os.getcwd()
    path = os.path.abspath(path)
    os.chdir(os.path.dirname(path))
    sys.argv = [path]
    try:
        runpy.run_path(path, run_name='__main__')
    except SystemExit:
        pass
    except Exception:  # noqa: BLE001 - the anatomy of what ran is still useful
        traceback.print_exc()
    finally:
        os.chdir(cwd)
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    live = {}
    total = peak = 0
    at_peak = {}
    for event in snapshot['device_traces'][0]:
        action = event['action']
        if action == 'alloc':
            live[event['addr']] = event
            total += event['size']
            if total > peak:
                peak = total
                at_peak = dict(live)
        elif action == 'free_completed' and event['addr'] in live:
            total -= live.pop(event['addr'])['size']
    print(f'== {path}: peak of traced allocations {peak / 2**20:.0f} MiB '
          f'(max_memory_allocated {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB), {len(at_peak)} blocks live')
    groups = {}
    for event in at_peak.values():
        key = ' <- '.join(frames_of(event)[:3])
        size, count = groups.get(key, (0, 0))
        groups[key] = (size + event['size'], count + 1)
    for key, (size, count) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:25]:
        print(f'{size / 2**20:9.1f} MiB {count:5d}x  {key}')
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


if __name__ == '__main__':
    for script in sys.argv[1:]:
        anatomy(script)
        sys.stdout.flush()
