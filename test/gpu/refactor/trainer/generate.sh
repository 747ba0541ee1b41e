#!/usr/bin/env bash
# The Trainer variants, made by the built CLI from the repository root (`npm run build` first).
set -eu
D=test/gpu/refactor/trainer
F=$D/train_trainer_gpt2.py
L=$(grep -n "TrainingArguments(" $F | tail -1 | cut -d: -f1)
for kind in amp-bf16 checkpointing accumulation:4; do
  out=$D/train_trainer_gpt2__${kind/:/-}.py
  cp $F $out
  node dist/cli.js refactor $out --line $L --apply $kind
done
