#!/bin/sh
# Run the holdout3 scripts with the runner and harness of ../holdout (run.py reads its scripts from a folder next
# to itself; this points that folder, and the offline hub configs, here and forwards every argument):
#   ./run.sh --out results.json
#   ./run.sh --jobs 3 --timeout 150 --logs /tmp/holdout3-logs --out results.json
#   ./run.sh train_gpt_compiled_tf32 train_moe_lm_inherit
HERE="$(cd "$(dirname "$0")" && pwd)"
exec "${PYTHON:-python3}" - "$@" <<PY
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("holdout_run", os.path.join("$HERE", "..", "holdout", "run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)
run.SCRIPTS = os.path.join("$HERE", "scripts")       # the harness stays that of ../holdout
run.HF_CONFIGS = os.path.join("$HERE", "hf_configs")  # gpt2, bert-base-uncased and EleutherAI/pythia-410m
sys.argv = ["run.sh"] + sys.argv[1:]
run.main()
PY
