#!/usr/bin/env python3
"""Run the held-out scripts on a CUDA machine and record what each one really used.

    python3 run.py --out results.json                 # every scripts/*.py
    python3 run.py train_nanogpt.py hf_trainer_gpt2.py # only these
    python3 run.py --jobs 3 --out results.json        # three at a time (each is its own process, so the peak
                                                      # of one is not changed by the others; only wall time is)

Each script runs in its own process with cwd=scripts/, PYTHONPATH=harness/ (harness/sitecustomize.py records the
CUDA peaks, parameter counts and dtypes at exit), PYTHONUNBUFFERED=1 and the HF libraries offline. A failure or a
timeout is recorded and the run goes on.
"""

import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
HARNESS = os.path.join(HERE, "harness")
HF_CONFIGS = os.path.join(HERE, "hf_configs")


def list_scripts(names):
    all_scripts = sorted(f for f in os.listdir(SCRIPTS) if f.endswith(".py"))
    if not names:
        return all_scripts
    chosen = []
    for n in names:
        base = os.path.basename(n)
        if not base.endswith(".py"):
            base += ".py"
        if base not in all_scripts:
            sys.exit("no such script: %s (see scripts/)" % n)
        chosen.append(base)
    return chosen


def tail(path, limit):
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run_one(script, timeout, workdir, python):
    stem = script[:-3]
    result_file = os.path.join(workdir, stem + ".jsonl")
    out_file = os.path.join(workdir, stem + ".stdout")
    err_file = os.path.join(workdir, stem + ".stderr")
    for p in (result_file,):
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ)
    env["PYTHONPATH"] = HARNESS + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env["HOLDOUT_RESULT"] = result_file
    env["HOLDOUT_HF_CONFIGS"] = HF_CONFIGS
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env.setdefault("HF_DATASETS_OFFLINE", "1")
    env.setdefault("WANDB_MODE", "disabled")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    timed_out = False
    t0 = time.time()
    with open(out_file, "wb") as out, open(err_file, "wb") as err:
        proc = subprocess.Popen([python, script], cwd=SCRIPTS, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the process group this runner started
            except OSError:
                proc.kill()
            rc = proc.wait()
    wall = time.time() - t0

    record = None
    try:
        with open(result_file) as fh:
            lines = [json.loads(line) for line in fh if line.strip()]
        mine = [r for r in lines if r.get("pid") == proc.pid]
        record = (mine or lines or [None])[-1]
    except (OSError, ValueError):
        record = None

    res = {
        "script": script,
        "ok": False,
        "returncode": rc,
        "timed_out": timed_out,
        "wall_s": round(wall, 2),
        "peak_alloc": None,
        "peak_reserved": None,
        "peak_alloc_gib": None,
        "peak_reserved_gib": None,
        "params": None,
        "trainable_params": None,
        "dtype": None,
        "module_dtype": None,
        "optimizers": [],
        "hub_models": [],
        "exception": None,
        "error": None,
    }
    if record:
        for k in ("peak_alloc", "peak_reserved", "params", "trainable_params", "dtype", "module_dtype",
                  "optimizers", "hub_models", "exception", "alloc_at_exit", "module", "opt_param_dtypes",
                  "device_name", "torch", "transformers", "notes"):
            if k in record:
                res[k] = record[k]
        if res["peak_alloc"] is not None:
            res["peak_alloc_gib"] = round(res["peak_alloc"] / 2 ** 30, 3)
        if res["peak_reserved"] is not None:
            res["peak_reserved_gib"] = round(res["peak_reserved"] / 2 ** 30, 3)
    res["ok"] = (rc == 0 and not timed_out and not res["exception"] and record is not None
                 and res["peak_alloc"] is not None)
    if not res["ok"]:
        why = []
        if timed_out:
            why.append("timed out after %ss" % timeout)
        if record is None:
            why.append("no harness record")
        elif res["peak_alloc"] is None:
            why.append("CUDA never initialised")
        res["error"] = ("; ".join(why) + "\n" if why else "") + tail(err_file, 2000)
    res["stdout_tail"] = tail(out_file, 600)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scripts", nargs="*", help="script names under scripts/ (default: all)")
    ap.add_argument("--out", default="results.json")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per script (default 60)")
    ap.add_argument("--jobs", type=int, default=1, help="scripts run at the same time (default 1)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--logs", default=None, help="keep each script's stdout/stderr in this folder")
    args = ap.parse_args()

    scripts = list_scripts(args.scripts)
    workdir = args.logs or tempfile.mkdtemp(prefix="holdout_")
    os.makedirs(workdir, exist_ok=True)
    t0 = time.time()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_one, s, args.timeout, workdir, args.python): s for s in scripts}
        for fut in concurrent.futures.as_completed(futs):
            s = futs[fut]
            try:
                r = fut.result()
            except Exception as exc:  # the runner itself broke on this one; keep going
                r = {"script": s, "ok": False, "error": "runner error: %r" % (exc,)}
            results[s] = r
            status = "ok " if r.get("ok") else "ERR"
            print("%s %-40s alloc %8s GiB  reserved %8s GiB  params %12s  %6ss" % (
                status, s, r.get("peak_alloc_gib"), r.get("peak_reserved_gib"), r.get("params"), r.get("wall_s")),
                flush=True)

    ordered = [results[s] for s in scripts]
    meta = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "total_wall_s": round(time.time() - t0, 1),
        "timeout_s": args.timeout,
        "jobs": args.jobs,
        "python": args.python,
        "n_scripts": len(ordered),
        "n_ok": sum(1 for r in ordered if r.get("ok")),
    }
    for r in ordered:
        for k in ("device_name", "torch", "transformers"):
            if r.get(k) and k not in meta:
                meta[k] = r[k]
    with open(args.out, "w") as fh:
        json.dump({"meta": meta, "results": ordered}, fh, indent=1)
    print("%d/%d ok; wrote %s" % (meta["n_ok"], meta["n_scripts"], args.out))


if __name__ == "__main__":
    main()
