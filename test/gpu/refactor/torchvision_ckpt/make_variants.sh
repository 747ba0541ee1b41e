#!/usr/bin/env bash
# Applies the checkpointing refactoring to each train_*.py with the built CLI (run from the repository root after
# `npm run build`): ckpt_<arch>.py beside it, and predicted.txt with what `oomguard refactor` printed.
set -eu
cd "$(dirname "$0")"
: > predicted.txt
for f in train_*.py; do
  line=$(grep -n '^for i in range' "$f" | cut -d: -f1)
  out=ckpt_${f#train_}
  cp "$f" "$out"
  node ../../../../dist/cli.js refactor "$out" --line "$line" --apply checkpointing 2>> predicted.txt
done
