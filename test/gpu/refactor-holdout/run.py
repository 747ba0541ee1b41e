#!/usr/bin/env python3
"""Run the held-out training scripts and their refactored variants; compare them.

    python3 run.py --originals scripts --variants variants --out results.json

Variants are files named `<script stem>__<kind>.py` in --variants, e.g.
`s04_gpt2_config_while_break__accumulation:4.py` (also accepted: `accumulation-4`,
`accumulation_4`, `amp_bf16`). A refusal by the tool is recorded as a file
`<script stem>__<kind>.refused` (its text: the tool's stderr); see README.md.

Every original and every variant runs in its own subprocess (cwd = the file's folder,
timeout --timeout seconds, default 120) under harness_boot.py, which adds a `HARNESS {json}`
line to the script's own `RESULT {json}` line. Each variant is compared with its original
against the invariants that manifest.json lists for that (script, kind). Nothing stops at the
first failure: every pair is run and reported. Exit status: 0 when every expectation held,
1 otherwise, 2 on a usage error.
"""
import argparse
import concurrent.futures as cf
import datetime as _dt
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GIB = 1024 ** 3


# --------------------------------------------------------------------------- discovery
def normalize_kind(kind):
    k = kind.strip().lower()
    m = re.fullmatch(r"accumulation[:_\-]?(\d+)", k)
    if m:
        return f"accumulation:{int(m.group(1))}"
    k = k.replace("_", "-")
    if k in ("amp-bf16", "ampbf16"):
        return "amp-bf16"
    if k in ("amp-fp16", "ampfp16"):
        return "amp-fp16"
    if k in ("checkpointing", "checkpoint", "gradient-checkpointing"):
        return "checkpointing"
    return kind


def kind_slug(kind):
    return kind.replace(":", "-")


def split_variant_name(filename):
    """'s01_x__accumulation:4.py' -> ('s01_x', 'accumulation:4'); None when it is no variant."""
    base = filename
    for suffix in (".refused.txt", ".refused", ".py"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    else:
        return None
    if "__" not in base:
        return None
    stem, kind = base.rsplit("__", 1)
    if stem.endswith(".py"):
        stem = stem[:-3]
    return stem, normalize_kind(kind)


def discover_variants(variants_dir):
    found, refused = {}, {}
    if not variants_dir or not os.path.isdir(variants_dir):
        return found, refused
    for name in sorted(os.listdir(variants_dir)):
        path = os.path.join(variants_dir, name)
        if not os.path.isfile(path):
            continue
        parsed = split_variant_name(name)
        if parsed is None:
            continue
        if name.endswith(".py"):
            found[parsed] = path
        else:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    refused[parsed] = f.read().strip()[-2000:]
            except OSError as e:
                refused[parsed] = f"(unreadable refusal note: {e})"
    return found, refused


# --------------------------------------------------------------------------- running
def parse_tagged(text, tag):
    value = None
    for line in text.splitlines():
        if line.startswith(tag + " "):
            try:
                value = json.loads(line[len(tag) + 1:])
            except json.JSONDecodeError:
                value = {"_unparsable": line[:500]}
    return value


def run_one(path, timeout, python, logs_dir, label, use_harness=True):
    folder = os.path.dirname(os.path.abspath(path))
    cmd = [python]
    if use_harness:
        cmd += [os.path.join(HERE, "harness_boot.py")]
    cmd += [os.path.abspath(path)]
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("BS", None)  # s18 reads its batch size from BS; the default must be what runs
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    t0 = time.time()
    rec = {"file": os.path.abspath(path), "cmd": cmd, "cwd": folder}
    try:
        proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
        rc, out, err, timed_out = proc.returncode, proc.stdout, proc.stderr, False
    except subprocess.TimeoutExpired as e:
        rc = None
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        timed_out = True
    rec["wall_s"] = round(time.time() - t0, 2)
    rec["rc"] = rc
    rec["timed_out"] = timed_out
    rec["result"] = parse_tagged(out, "RESULT")
    rec["harness"] = parse_tagged(out, "HARNESS")
    ok = (rc == 0) and isinstance(rec["result"], dict) and "_unparsable" not in rec["result"]
    rec["ok"] = ok
    rec["crash"] = None
    if not ok:
        why = "timeout after %ss" % timeout if timed_out else ("exit status %s" % rc)
        if rc == 0 and rec["result"] is None:
            why = "exit status 0 but no RESULT line"
        tail = "\n".join(err.strip().splitlines()[-40:])
        rec["crash"] = why + ("\n" + tail if tail else "")
    if logs_dir:
        os.makedirs(logs_dir, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.\-]", "-", label)
        log_path = os.path.join(logs_dir, safe + ".log")
        with open(log_path, "w", encoding="utf-8") as f:
            f.write("$ (cd %s && %s)\n" % (folder, " ".join(cmd)))
            f.write("---- stdout ----\n" + out + "\n---- stderr ----\n" + err)
        rec["log"] = log_path
    return rec


def copy_sidecars(originals_dir, variants_dir):
    """Variants run from their own folder; give it the data files the originals read."""
    copied = []
    if not variants_dir or not os.path.isdir(variants_dir):
        return copied
    for name in sorted(os.listdir(originals_dir)):
        src = os.path.join(originals_dir, name)
        if not os.path.isfile(src) or name.endswith((".py", ".pyc")):
            continue
        dst = os.path.join(variants_dir, name)
        if not os.path.exists(dst):
            shutil.copy2(src, dst)
            copied.append(name)
    return copied


# --------------------------------------------------------------------------- checks
def get_field(run, field):
    if field.startswith("harness."):
        src = run.get("harness") or {}
        field = field[len("harness."):]
    else:
        src = run.get("result") or {}
    cur = src
    for part in field.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def rel_diff(o, v):
    try:
        o, v = float(o), float(v)
    except (TypeError, ValueError):
        return None
    if math.isnan(o) or math.isnan(v):
        return None
    return abs(v - o) / max(abs(o), 1e-30)


def evaluate_check(check, orig, var):
    field = check["field"]
    kind = check["check"]
    gating = check.get("gating", True)
    o = get_field(orig, field)
    v = get_field(var, field)
    res = {"field": field, "check": kind, "gating": gating, "original": o, "variant": v}
    if "note" in check:
        res["note"] = check["note"]
    passed = False
    detail = ""
    try:
        if kind == "equal":
            if o is None and v is None:
                passed, detail = True, "both absent"
            else:
                passed = o == v
        elif kind == "rel":
            tol, floor = float(check["tol"]), float(check.get("abs", 0.0))
            if o is None and v is None:
                passed, detail = True, "both absent"
            elif o is None or v is None:
                passed, detail = False, "missing value"
            else:
                o_f, v_f = float(o), float(v)
                diff = abs(v_f - o_f)
                limit = max(tol * abs(o_f), floor)
                passed = math.isfinite(v_f) and diff <= limit
                res["abs_diff"] = diff
                res["rel_diff"] = rel_diff(o_f, v_f)
                res["limit"] = limit
        elif kind == "steps_at_least":
            # fp16 GradScaler may skip a few updates (inf/nan gradients); never more than the original.
            if o is None and v is None:
                passed, detail = True, "both absent"
            elif o is None or v is None:
                passed, detail = False, "missing value"
            else:
                slack = max(int(check.get("slack_abs", 3)), int(math.ceil(float(check.get("slack_frac", 0.1)) * o)))
                passed = (o - slack) <= v <= o
                res["allowed"] = [o - slack, o]
        elif kind == "same_length":
            if o is None and v is None:
                passed, detail = True, "both absent"
            else:
                passed = isinstance(o, list) and isinstance(v, list) and len(o) == len(v)
        elif kind == "true":
            passed = v is True
        elif kind == "value_equal":
            passed = v == check["value"]
            res["expected"] = check["value"]
        elif kind == "value_min":
            passed = v is not None and v >= check["value"]
            res["expected_min"] = check["value"]
        elif kind == "value_max":
            passed = v is not None and v <= check["value"]
            res["expected_max"] = check["value"]
        elif kind == "contains":
            passed = isinstance(v, (list, str, dict)) and check["value"] in v
            res["expected_item"] = check["value"]
        elif kind == "saved_pct_min":
            o_mem = get_field(orig, "max_memory_allocated")
            v_mem = get_field(var, "max_memory_allocated")
            res["original"], res["variant"] = o_mem, v_mem
            if o_mem and v_mem is not None:
                pct = 100.0 * (o_mem - v_mem) / o_mem
                res["saved_pct"] = round(pct, 2)
                passed = pct >= float(check["min"])
                res["expected_min_pct"] = check["min"]
            else:
                passed, detail = False, "missing memory figure"
        else:
            passed, detail = False, "unknown check type %r" % kind
    except Exception as e:  # noqa: BLE001 - a broken value fails the check, never the run
        passed, detail = False, "error: %s" % e
    res["pass"] = bool(passed)
    if detail:
        res["detail"] = detail
    return res


def memory_block(orig, var):
    o = get_field(orig, "max_memory_allocated")
    v = get_field(var, "max_memory_allocated")
    if o is None or v is None:
        return {"original": o, "variant": v, "saved_bytes": None, "saved_pct": None}
    return {
        "original": o,
        "variant": v,
        "original_gib": round(o / GIB, 3),
        "variant_gib": round(v / GIB, 3),
        "saved_bytes": o - v,
        "saved_pct": round(100.0 * (o - v) / o, 2) if o else None,
    }


DIFF_FIELDS = ("loss", "eval_loss", "param_checksum", "param_delta", "lr", "opt_steps", "sched_steps")


def diffs_block(orig, var):
    out = {}
    for f in DIFF_FIELDS:
        o, v = get_field(orig, f), get_field(var, f)
        out[f] = {"original": o, "variant": v, "rel_diff": rel_diff(o, v) if o is not None and v is not None else None}
    out["log_at"] = {"original": get_field(orig, "log_at"), "variant": get_field(var, "log_at")}
    return out


def resolve_invariants(manifest, spec):
    inv = spec.get("invariants", [])
    if isinstance(inv, str):
        inv = [inv]
    checks = []
    for item in inv:
        if isinstance(item, str):
            checks.extend(manifest["invariant_sets"][item])
        else:
            checks.append(item)
    # per-entry overrides: {"field": ..., "check": ..., ...} replacing same field+check, or "drop": [fields]
    for extra in spec.get("extra_checks", []):
        checks = [c for c in checks if not (c["field"] == extra["field"] and c["check"] == extra["check"])]
        checks.append(extra)
    drop = set(spec.get("drop_checks", []))
    return [c for c in checks if c["field"] not in drop]


# --------------------------------------------------------------------------- original sanity
def original_sanity(manifest, stem, run):
    checks = []
    res = run.get("result") or {}
    exp = (manifest.get("scripts", {}).get(stem) or {}).get("expected_original", {})

    def add(name, passed, detail, advisory=False):
        checks.append({"check": name, "pass": bool(passed), "detail": detail, "advisory": advisory})

    add("runs", run.get("ok"), run.get("crash") or "RESULT line parsed")
    if res:
        add("finite", res.get("finite") is True, "loss %s eval_loss %s" % (res.get("loss"), res.get("eval_loss")))
        peak = res.get("max_memory_allocated") or 0
        lo, hi = manifest.get("peak_gib_range", [2, 30])
        add("peak_in_range", lo * GIB <= peak <= hi * GIB, "%.2f GiB (wanted %s..%s GiB)" % (peak / GIB, lo, hi))
        add("fast_enough", run.get("wall_s", 1e9) <= manifest.get("max_original_wall_s", 30),
            "%.1f s wall (advisory: parallel --jobs inflate it)" % run.get("wall_s", -1), advisory=True)
        for key, want in exp.items():
            got = res.get(key)
            add("expected_" + key, got == want, "got %r, manifest says %r" % (got, want))
    return checks


# --------------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--originals", required=True, help="folder with the original scripts (scripts/)")
    ap.add_argument("--variants", default=None, help="folder with <stem>__<kind>.py variants")
    ap.add_argument("--out", required=True, help="JSON report to write")
    ap.add_argument("--manifest", default=os.path.join(HERE, "manifest.json"))
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--jobs", type=int, default=1, help="parallel subprocesses (they share the GPU; peak memory is per process)")
    ap.add_argument("--only", default=None, help="comma-separated script stems or prefixes (s01,s04)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--logs", default=None, help="folder for per-run logs (default: <out>.logs)")
    ap.add_argument("--no-harness", action="store_true", help="run scripts directly (no HARNESS line; harness checks then fail)")
    ap.add_argument("--skip-originals-without-variants", action="store_true")
    ap.add_argument("--rescore", default=None, metavar="REPORT",
                    help="run nothing: re-judge the runs stored in an earlier report against the current manifest")
    args = ap.parse_args(argv)

    if not os.path.isdir(args.originals):
        print("run.py: --originals %r is not a folder" % args.originals, file=sys.stderr)
        return 2
    try:
        with open(args.manifest, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print("run.py: cannot read manifest %s: %s" % (args.manifest, e), file=sys.stderr)
        return 2
    logs_dir = args.logs or (args.out + ".logs")
    only = [s for s in (args.only or "").split(",") if s]

    def selected(stem):
        return not only or any(stem == o or stem.startswith(o) for o in only)

    originals = {}
    for name in sorted(os.listdir(args.originals)):
        if name.endswith(".py") and "__" not in name:
            stem = name[:-3]
            if selected(stem):
                originals[stem] = os.path.join(args.originals, name)

    variants, refused = discover_variants(args.variants)
    variants = {k: v for k, v in variants.items() if selected(k[0])}
    refused = {k: v for k, v in refused.items() if selected(k[0])}
    sidecars = copy_sidecars(args.originals, args.variants)

    if args.skip_originals_without_variants:
        wanted = {s for s, _ in variants}
        originals = {s: p for s, p in originals.items() if s in wanted}

    jobs = [("original", stem, None, path) for stem, path in originals.items()]
    jobs += [("variant", stem, kind, path) for (stem, kind), path in sorted(variants.items())]

    def do(job):
        role, stem, kind, path = job
        label = stem if role == "original" else "%s__%s" % (stem, kind_slug(kind))
        print("[run.py] start %s" % label, flush=True)
        rec = run_one(path, args.timeout, args.python, logs_dir, label, use_harness=not args.no_harness)
        state = "ok" if rec["ok"] else "FAILED (%s)" % (rec["crash"] or "").splitlines()[0]
        print("[run.py] done  %s in %.1fs: %s" % (label, rec["wall_s"], state), flush=True)
        return job, rec

    runs = {}
    if args.rescore:
        with open(args.rescore, encoding="utf-8") as f:
            old = json.load(f)
        for stem, rec in old.get("originals", {}).items():
            rec.pop("sanity", None)
            if selected(stem):
                runs[("original", stem, None)] = rec
                originals.setdefault(stem, rec.get("file"))
        for p in old.get("pairs", []):
            if p.get("run") is not None and selected(p["script"]):
                runs[("variant", p["script"], p["kind"])] = p["run"]
                variants.setdefault((p["script"], p["kind"]), p.get("variant_file"))
            if p.get("refusal_note") is not None and selected(p["script"]):
                refused.setdefault((p["script"], p["kind"]), p["refusal_note"])
        originals = {s: f for s, f in originals.items() if ("original", s, None) in runs}
        variants = {k: f for k, f in variants.items() if ("variant",) + k in runs}
        jobs = []
    if args.jobs > 1:
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            for job, rec in ex.map(do, jobs):
                runs[job[:3]] = rec
    else:
        for job in jobs:
            j, rec = do(job)
            runs[j[:3]] = rec

    report = {
        "generated": _dt.datetime.now().isoformat(timespec="seconds"),
        "manifest": os.path.abspath(args.manifest),
        "originals_dir": os.path.abspath(args.originals),
        "variants_dir": os.path.abspath(args.variants) if args.variants else None,
        "sidecars_copied_into_variants": sidecars,
        "originals": {},
        "pairs": [],
        "summary": {},
    }
    for stem in originals:
        rec = runs[("original", stem, None)]
        rec["sanity"] = original_sanity(manifest, stem, rec)
        report["originals"][stem] = rec

    # every (script, kind) the manifest lists, plus every variant file found
    keys = set()
    for stem, meta in manifest.get("scripts", {}).items():
        if stem in originals:
            for kind in meta.get("refactorings", {}):
                keys.add((stem, kind))
    keys |= set(variants) | set(refused)

    for stem, kind in sorted(keys):
        meta = manifest.get("scripts", {}).get(stem, {})
        spec = meta.get("refactorings", {}).get(kind)
        expect = spec["expect"] if spec else "unlisted"
        pair = {
            "script": stem,
            "kind": kind,
            "expect": expect,
            "why": spec.get("why") if spec else None,
            "loop_line": meta.get("loop_line"),
            "variant_file": variants.get((stem, kind)),
            "refusal_note": refused.get((stem, kind)),
        }
        orig = report["originals"].get(stem)
        var = runs.get(("variant", stem, kind))
        if var is not None:
            pair["run"] = {k: var.get(k) for k in ("rc", "ok", "timed_out", "wall_s", "crash", "log", "result", "harness")}
        if var is None:
            if expect == "apply":
                pair["status"] = "refused" if pair["refusal_note"] is not None else "missing"
                pair["pass"] = False
            elif expect == "refuse":
                pair["status"] = "refused-ok" if pair["refusal_note"] is not None else "not-generated"
                pair["pass"] = True
            elif expect == "either":
                pair["status"] = "not-offered"
                pair["pass"] = True
            else:
                pair["status"] = "refused-unlisted"
                pair["pass"] = True
            report["pairs"].append(pair)
            continue
        if orig is None or not orig.get("ok"):
            pair["status"] = "original-failed" if orig is not None else "no-original"
            pair["pass"] = False
            report["pairs"].append(pair)
            continue
        pair["memory"] = memory_block(orig, var)
        pair["diffs"] = diffs_block(orig, var)
        if not var.get("ok"):
            pair["status"] = "applied-but-must-refuse (crashed)" if expect == "refuse" else "crash"
            pair["pass"] = False
            report["pairs"].append(pair)
            continue
        checks = [evaluate_check(c, orig, var) for c in resolve_invariants(manifest, spec)] if spec else []
        pair["invariants"] = checks
        failed = [c for c in checks if c["gating"] and not c["pass"]]
        pair["failed_invariants"] = ["%s:%s" % (c["field"], c["check"]) for c in failed]
        pair["advisory_failed"] = ["%s:%s" % (c["field"], c["check"]) for c in checks if not c["gating"] and not c["pass"]]
        if expect == "refuse":
            pair["status"] = "applied-but-must-refuse"
            pair["pass"] = False
        elif expect == "unlisted":
            pair["status"] = "unlisted"
            pair["pass"] = True
        else:
            pair["status"] = "pass" if not failed else "fail"
            pair["pass"] = not failed
        report["pairs"].append(pair)

    # summary
    by_status, by_kind = {}, {}
    for p in report["pairs"]:
        by_status[p["status"]] = by_status.get(p["status"], 0) + 1
        k = by_kind.setdefault(p["kind"], {"pairs": 0, "pass": 0, "fail": 0, "mean_saved_pct": None, "_saved": []})
        k["pairs"] += 1
        k["pass" if p["pass"] else "fail"] += 1
        if p.get("status") == "pass" and p.get("memory", {}).get("saved_pct") is not None:
            k["_saved"].append(p["memory"]["saved_pct"])
    for k in by_kind.values():
        saved = k.pop("_saved")
        k["mean_saved_pct"] = round(sum(saved) / len(saved), 2) if saved else None
    orig_bad = [s for s, r in report["originals"].items() if not all(c["pass"] or c.get("advisory") for c in r["sanity"])]
    report["summary"] = {
        "originals": len(report["originals"]),
        "originals_with_problems": orig_bad,
        "pairs": len(report["pairs"]),
        "pairs_passed": sum(1 for p in report["pairs"] if p["pass"]),
        "pairs_failed": sum(1 for p in report["pairs"] if not p["pass"]),
        "by_status": by_status,
        "by_kind": by_kind,
        "failed": ["%s [%s]: %s %s" % (p["script"], p["kind"], p["status"], ",".join(p.get("failed_invariants", [])))
                   for p in report["pairs"] if not p["pass"]],
    }

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)

    s = report["summary"]
    print("[run.py] originals: %d (%d with problems: %s)" % (s["originals"], len(orig_bad), ", ".join(orig_bad) or "-"))
    print("[run.py] pairs: %d, passed %d, failed %d; by status %s" % (s["pairs"], s["pairs_passed"], s["pairs_failed"], by_status))
    for line in s["failed"]:
        print("[run.py]   FAIL " + line)
    print("[run.py] report written to %s" % args.out)
    return 0 if (s["pairs_failed"] == 0 and not orig_bad) else 1


if __name__ == "__main__":
    sys.exit(main())
