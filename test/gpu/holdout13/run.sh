#!/bin/sh
# Run the holdout13 scripts with the runner and harness of ../holdout (run.py reads its scripts from a folder next
# to itself; this points that folder here and forwards every argument; the offline hub configs stay those of
# ../holdout: gpt2, bert-base-uncased, Qwen/Qwen2.5-0.5B, TinyLlama, facebook/opt-350m; this set uses Qwen/Qwen2.5-0.5B, facebook/opt-350m and bert-base-uncased):
#   ./run.sh --out results.json
#   ./run.sh --jobs 4 --timeout 150 --logs /tmp/holdout13-logs --out results.json
#   ./run.sh train_mamba_selective_scan_loop train_lora_parametrize_qwen
HERE="$(cd "$(dirname "$0")" && pwd)"
exec "${PYTHON:-python3}" - "$@" <<PY
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("holdout_run", os.path.join("$HERE", "..", "holdout", "run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)
run.SCRIPTS = os.path.join("$HERE", "scripts")   # HARNESS and HF_CONFIGS stay those of ../holdout
sys.argv = ["run.sh"] + sys.argv[1:]
run.main()
PY
