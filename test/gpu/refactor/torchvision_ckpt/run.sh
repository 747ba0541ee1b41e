#!/usr/bin/env bash
# On the GPU machine: runs every original and its checkpointed variant, each in its own process.
cd "$(dirname "$0")"
for f in train_*.py; do
  arch=${f#train_}; arch=${arch%.py}
  printf '%s original ' "$arch"; python "$f" | grep RESULT
  printf '%s checkpointed ' "$arch"; python "ckpt_$arch.py" | grep RESULT
done
