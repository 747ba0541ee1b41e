"""Runs the Trainer script and the variants `oomguard refactor` made of it (generate.sh), one process each, and
writes OUT/trainer.json: peak memory, optimizer steps, last learning rate and logged losses per run.

Usage (on a CUDA machine, from this folder): python3 run.py OUT_DIR"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = ["train_trainer_gpt2.py", "train_trainer_gpt2__amp-bf16.py", "train_trainer_gpt2__checkpointing.py", "train_trainer_gpt2__accumulation-4.py"]


def main():
    out = {}
    for name in RUNS:
        proc = subprocess.run([sys.executable, os.path.join(HERE, name)], capture_output=True, text=True, timeout=500, cwd=HERE)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        out[name] = json.loads(lines[-1][7:]) if lines else {"error": proc.stderr[-3000:], "returncode": proc.returncode}
        print(name, json.dumps(out[name])[:400], flush=True)
    base = out[RUNS[0]].get("peak_alloc_bytes")
    for name in RUNS[1:]:
        peak = out[name].get("peak_alloc_bytes")
        if base and peak:
            out[name]["saved_pct"] = round(100 * (1 - peak / base), 2)
    with open(os.path.join(sys.argv[1], "trainer.json"), "w") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
