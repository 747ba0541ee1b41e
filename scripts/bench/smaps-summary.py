# Where a process's resident memory is, by kind of mapping (Linux /proc/PID/smaps): the node binary's pages, V8's
# 256 KiB heap pages, glibc's heaps (the main one and one per thread that allocated), and the rest.
#   python3 scripts/bench/smaps-summary.py PID
#   OOMGUARD_AB_SMAPS=scripts/bench/smaps-summary.py node --import tsx scripts/bench/open-ab.ts many RUNS OLD NEW
import collections
import re
import sys

pid = sys.argv[1]
rows = []
current = None
with open(f'/proc/{pid}/smaps') as smaps:
    for line in smaps:
        if re.match(r'^[0-9a-f]+-[0-9a-f]+ ', line):
            parts = line.split()
            low, high = (int(x, 16) for x in parts[0].split('-'))
            current = [low, (high - low) // 1024, parts[5] if len(parts) > 5 else '[anon]', 0]
            rows.append(current)
        elif line.startswith('Rss:'):
            current[3] = int(line.split()[1])

kinds = collections.Counter()
for low, size_kb, name, rss_kb in rows:
    if name == '[anon]':
        # glibc maps each thread's heap at a 64 MiB boundary, 64 MiB at most.
        if low % (64 << 20) == 0 and size_kb <= 65536 and low > 0x7F0000000000:
            kind = 'malloc, threads'
        elif size_kb == 256:
            kind = 'V8 heap pages'
        else:
            kind = 'other anonymous'
    elif name == '[heap]':
        kind = 'malloc, main thread'
    elif name.endswith('/node'):
        kind = 'node binary'
    else:
        kind = 'other files'
    kinds[kind] += rss_kb
print(f'resident {sum(kinds.values()) / 1024:.1f} MiB: ' + ', '.join(f'{kind} {kb / 1024:.1f}' for kind, kb in kinds.most_common() if kb > 0))
