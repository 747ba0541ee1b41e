#!/usr/bin/env bash
# Applies every refactoring the manifest lists to a copy of its script with the built CLI (`npm run build` first),
# from the repository root: variants/<stem>__<kind>.py, a .refused note where the tool declines, and
# variants/predicted.json with the estimate's peak before and after for each applied refactoring (what the panel shows).
set -u
H=test/gpu/refactor-holdout
rm -rf $H/variants && mkdir -p $H/variants
# Config files the scripts read from their own folder (s19_config.yaml): the refactoring reads them too.
find $H/scripts -maxdepth 1 -type f ! -name '*.py' -exec cp {} $H/variants/ \;
echo '{' > $H/variants/predicted.json
first=1
python3 -c '
import json
m = json.load(open("test/gpu/refactor-holdout/manifest.json"))
for stem, s in m["scripts"].items():
    for kind in s["refactorings"]:
        print(stem, s["loop_line"], kind)' | while read -r stem line kind; do
  slug=${kind/:/-}
  dst=$H/variants/${stem}__${slug}.py
  cp "$H/scripts/$stem.py" "$dst"
  node dist/cli.js refactor "$dst" --line "$line" --apply "$kind" 2> /tmp/holdout-stderr.txt
  rc=$?
  if [ $rc -ne 0 ]; then
    rm -f "$dst"
    if [ $rc -eq 1 ]; then cp /tmp/holdout-stderr.txt "$H/variants/${stem}__${slug}.refused"
    else cp /tmp/holdout-stderr.txt "$H/variants/${stem}__${slug}.error.txt"; fi
  else
    [ $first -eq 1 ] || echo ',' >> $H/variants/predicted.json
    first=0
    python3 -c 'import json,sys; print(json.dumps(sys.argv[1]) + ": " + json.dumps(open(sys.argv[2]).read().strip()), end="")' "${stem}__${slug}" /tmp/holdout-stderr.txt >> $H/variants/predicted.json
  fi
done
echo '}' >> $H/variants/predicted.json
