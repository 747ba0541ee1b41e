#!/usr/bin/env python3
"""Merges run.py reports of parts of the set (later reports win for the scripts they ran) into one report, and sets
each pair's predicted saving from variants/predicted.json (what `oomguard refactor` printed: the estimate's peak
before and after, as the editor's panel shows it).

Usage: python3 merge_reports.py OUT.json REPORT.json [REPORT.json ...]
"""
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out, reports = sys.argv[1], sys.argv[2:]
    originals, pairs = {}, {}
    for path in reports:
        report = json.load(open(path))
        ran = set(report["originals"])
        originals.update(report["originals"])
        for key in [k for k in pairs if k[0] in ran]:
            del pairs[key]
        for pair in report["pairs"]:
            pairs[(pair["script"], pair["kind"])] = pair
    predicted = json.load(open(os.path.join(HERE, "variants", "predicted.json")))
    gaps = []
    for (script, kind), pair in pairs.items():
        note = predicted.get(f"{script}__{kind.replace(':', '-')}")
        match = re.search(r"\(([\d.]+)% less\)", note or "")
        pair["predicted_saved_pct"] = float(match.group(1)) if match else None
        measured = (pair.get("memory") or {}).get("saved_pct")
        if pair["predicted_saved_pct"] is not None and measured is not None and pair.get("pass"):
            pair["prediction_gap_points"] = round(pair["predicted_saved_pct"] - measured, 2)
            gaps.append(abs(pair["prediction_gap_points"]))
    by_status, by_kind = {}, {}
    for pair in pairs.values():
        by_status[pair["status"]] = by_status.get(pair["status"], 0) + 1
        kind = by_kind.setdefault(pair["kind"], {"pairs": 0, "pass": 0})
        kind["pairs"] += 1
        kind["pass"] += bool(pair.get("pass"))
    summary = {
        "pairs": len(pairs), "passed": sum(bool(p.get("pass")) for p in pairs.values()), "by_status": by_status, "by_kind": by_kind,
        "prediction_gap_points": {"n": len(gaps), "median": statistics.median(gaps) if gaps else None, "max": max(gaps) if gaps else None},
        "failed": [f"{p['script']} [{p['kind']}]: {p['status']} {','.join(p.get('failed_invariants') or [])}" for p in pairs.values() if not p.get("pass")],
    }
    json.dump({"originals": originals, "pairs": list(pairs.values()), "summary": summary}, open(out, "w"), indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
