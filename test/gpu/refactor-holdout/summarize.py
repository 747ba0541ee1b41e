#!/usr/bin/env python3
"""Print a compact table from a run.py report: python3 summarize.py results.json"""
import json
import sys

GIB = 1024 ** 3


def fmt(x, spec=".4g"):
    if x is None:
        return "-"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def main(path):
    with open(path, encoding="utf-8") as f:
        r = json.load(f)
    print("ORIGINALS")
    print("%-40s %6s %7s %5s %9s %9s %9s %-9s %s" % ("script", "wall_s", "peakGiB", "steps", "loss", "eval", "lr", "dtype", "sanity"))
    for stem, rec in r["originals"].items():
        res = rec.get("result") or {}
        bad = [c["check"] + ("(advisory)" if c.get("advisory") else "") for c in rec.get("sanity", []) if not c["pass"]]
        print("%-40s %6s %7s %5s %9s %9s %9s %-9s %s" % (
            stem[:40], fmt(rec.get("wall_s")), fmt((res.get("max_memory_allocated") or 0) / GIB, ".2f"),
            fmt(res.get("opt_steps")), fmt(res.get("loss")), fmt(res.get("eval_loss")), fmt(res.get("lr"), ".3g"),
            res.get("param_dtype", "-"), "ok" if not bad else "PROBLEM " + ",".join(bad)))
        if not rec.get("ok"):
            print("    crash: " + (rec.get("crash") or "").replace("\n", "\n    "))
    print()
    print("PAIRS")
    for p in r["pairs"]:
        mem = p.get("memory") or {}
        d = p.get("diffs") or {}
        rd = {k: (d.get(k) or {}).get("rel_diff") for k in ("loss", "eval_loss", "param_checksum", "param_delta")}
        print("%-40s %-15s %-7s %-22s saved %s%%  rel: loss %s eval %s sum %s delta %s" % (
            p["script"][:40], p["kind"], p["expect"], p["status"], fmt(mem.get("saved_pct")),
            fmt(rd["loss"], ".1e"), fmt(rd["eval_loss"], ".1e"), fmt(rd["param_checksum"], ".1e"), fmt(rd["param_delta"], ".1e")))
        if p.get("failed_invariants"):
            print("    failed: " + ", ".join(p["failed_invariants"]))
        run = p.get("run") or {}
        if run.get("crash"):
            print("    crash: " + run["crash"].strip().splitlines()[-1][:300])
        h = run.get("harness")
        if h:
            print("    harness: scalers=%s ckpt_calls=%s autocast=%s steps=%s" % (
                h.get("gradscaler_instances"), h.get("checkpoint_calls"), h.get("autocast_dtypes"), h.get("optimizer_steps")))
    print()
    print("SUMMARY", json.dumps(r["summary"], indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results.json")
