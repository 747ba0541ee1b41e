"""Runs each GPU training script before and after each refactoring, one fresh process per run, and records the
peak GPU memory (torch.cuda.max_memory_allocated) and whether the loss decreased.

Usage (on a machine with a CUDA GPU): python3 test/gpu/refactor/run.py OUT_DIR
The "after" scripts are generated here by the real engine: node --import tsx test/gpu/refactor/generate.ts
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Child process: runs one script and reports its peak memory and its losses as one JSON line.
CHILD = r"""
import json, runpy, sys, time, torch
torch.cuda.reset_peak_memory_stats()
start = time.time()
namespace = runpy.run_path(sys.argv[1], run_name="__main__")
torch.cuda.synchronize()
print("RESULT " + json.dumps({
    "peak_alloc_bytes": torch.cuda.max_memory_allocated(),
    "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
    "losses": [float(x) for x in namespace["losses"]],
    "seconds": time.time() - start,
}))
"""

MODELS = {"train_gpt2": 12, "train_resnet50": 16}
VARIANTS = ["amp_bf16", "amp_fp16", "checkpointing", "accumulation4"]
TARGETS = {"amp_bf16": 0.15, "amp_fp16": 0.15, "checkpointing": 0.40, "accumulation4": 0.40}


def run_one(path, steps):
    env = dict(os.environ, STEPS=str(steps), PYTHONUNBUFFERED="1")
    started = time.time()
    proc = subprocess.run([sys.executable, "-c", CHILD, path], env=env, capture_output=True, text=True, timeout=400)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        return {"ok": False, "returncode": proc.returncode, "stderr_tail": proc.stderr[-3000:], "wall_seconds": time.time() - started}
    result = json.loads(lines[-1][len("RESULT "):])
    losses = result["losses"]
    k = max(1, len(losses) // 4)
    result.update(ok=True, steps=steps, first_mean=sum(losses[:k]) / k, last_mean=sum(losses[-k:]) / k, wall_seconds=time.time() - started)
    result["loss_decreased"] = result["last_mean"] < result["first_mean"]
    return result


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    import torch
    records = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "runs": {}}
    try:
        import transformers, torchvision
        records["transformers"] = transformers.__version__
        records["torchvision"] = torchvision.__version__
    except Exception as error:  # a missing library shows up in the runs themselves
        records["import_error"] = repr(error)
    for script, steps in MODELS.items():
        base = run_one(os.path.join(HERE, script + ".py"), steps)
        records["runs"][script] = {"before": base}
        print(script, "before", json.dumps({k: v for k, v in base.items() if k != "losses"}), flush=True)
        for variant in VARIANTS:
            # Accumulation x4 runs four micro-batches per optimizer step: the same number of optimizer steps.
            run_steps = steps * 4 if variant == "accumulation4" else steps
            path = os.path.join(HERE, "generated", f"{script}_{variant}.py")
            if not os.path.exists(path):
                # The engine did not offer it here (generated/<script>_<variant>.refused.txt says why).
                records["runs"][script][variant] = {"ok": None, "refused": True}
                continue
            after = run_one(path, run_steps)
            if base.get("ok") and after.get("ok"):
                after["peak_reduction"] = 1 - after["peak_alloc_bytes"] / base["peak_alloc_bytes"]
                after["target"] = TARGETS[variant]
                after["meets_target"] = after["peak_reduction"] >= TARGETS[variant] and after["loss_decreased"]
            records["runs"][script][variant] = after
            print(script, variant, json.dumps({k: v for k, v in after.items() if k != "losses"}), flush=True)
            with open(os.path.join(out_dir, "refactor-measurements.json"), "w") as handle:
                json.dump(records, handle, indent=2)


if __name__ == "__main__":
    main()
