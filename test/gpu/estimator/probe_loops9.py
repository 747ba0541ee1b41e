# Loops in forward and what they keep (helper loops9, held-out set 9): a selective-scan LM whose Python loop over
# 1,024 time steps runs past the trace's 512-pass unrolling bound; a capsule layer whose matmul broadcasts a
# parameter over the batch; a no-grad bf16-autocast nn.TransformerEncoder stack (what is alive at once).
# python probe_loops9.py [OUT.json]   Each script in probe_loops9/ runs whole in a fresh process; peak =
# torch.cuda.max_memory_allocated() over the script, as the held-out harness measures it.
import json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = ("import json, runpy, sys, torch; runpy.run_path(sys.argv[1], run_name='__main__'); "
       "print('PEAK ' + json.dumps({'peak_alloc': torch.cuda.max_memory_allocated(), "
       "'peak_mib': round(torch.cuda.max_memory_allocated() / 2**20, 1)}))")
rows = []
for name in sorted(os.listdir(os.path.join(HERE, "probe_loops9"))):
    if not name.endswith(".py"):
        continue
    t0 = time.time()
    run = subprocess.run([sys.executable, "-c", RUN, os.path.join(HERE, "probe_loops9", name)], capture_output=True, text=True, timeout=150)
    rec = {"script": name, "s": round(time.time() - t0, 1)}
    peak = [line for line in run.stdout.splitlines() if line.startswith("PEAK ")]
    if peak:
        rec.update(json.loads(peak[-1][5:]))
    else:
        rec["error"] = run.stderr[-500:]
    rows.append(rec)
    print(json.dumps(rec), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump({"rows": rows}, f, indent=1)
