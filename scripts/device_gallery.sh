#!/usr/bin/env bash
# The paper-scale gallery on a GPU within a time budget (docs/gallery.md, "Paper scale"):
#
#   OUT=/some/dir bash scripts/device_gallery.sh SECONDS NAME...
#
# Runs each named experiment at paper scale (`python scripts/gallery.py --scale paper NAME`)
# in the order given until SECONDS are spent, then copies into $OUT what a later run needs:
# the filed figures, rows and claims (docs/gallery/paper/, docs/gallery/records/,
# docs/gallery.md) and every sweep's rows so far (outputs/gallery/paper/), so that a figure cut
# off by the budget resumes from its finished points when outputs/gallery/paper/ is restored.
set -u
budget=${1:?usage: scripts/device_gallery.sh SECONDS NAME...}
shift
out=${OUT:?set OUT to the directory that receives the results}
end=$((SECONDS + budget))
python -c "import jax; print(jax.default_backend(), jax.devices())"
for name in "$@"; do
    left=$((end - SECONDS - 20))  # 20 s kept for the copy
    if [ "$left" -le 60 ]; then
        echo "budget spent: $name and the rest not started"
        break
    fi
    echo "== $name at paper scale ($left s left)"
    timeout --signal=INT "$left" python scripts/gallery.py --scale paper "$name"
done
mkdir -p "$out/docs/gallery" "$out/outputs/gallery"
cp -r docs/gallery/records "$out/docs/gallery/"; cp docs/gallery.md "$out/docs/"
[ -d docs/gallery/paper ] && cp -r docs/gallery/paper "$out/docs/gallery/"
[ -d outputs/gallery/paper ] && (cd outputs/gallery && find paper -name 'results.csv' -o -name 'claims.md' \
    | tar -cf - -T - | tar -xf - -C "$out/outputs/gallery")
echo "copied to $out"
