#!/usr/bin/env bash
# The paper-scale gallery on a GPU within a time budget (docs/gallery.md, "Paper scale"):
#
#   OUT=/some/dir bash scripts/device_gallery.sh SECONDS NAME...
#
# Runs each named experiment at paper scale (`python scripts/gallery.py --scale paper NAME`;
# `a,b,c` runs figures that share a network as one sweep) in the order given until SECONDS are
# spent, then writes $OUT/gallery.tar.gz: the filed figures, rows and claims
# (docs/gallery/paper/, docs/gallery/records/, docs/gallery.md; a sweep cut off by the budget
# files those of its figures whose points are all done) and every sweep's rows so far
# (outputs/gallery/paper/), so that a figure cut off by the budget resumes from its finished
# points once the archive is unpacked in the checkout (`tar -xzf gallery.tar.gz`). One archive,
# because a device machine returns only a few files from shallow folders. SETTINGS (space
# separated KEY=VALUE, `gallery.py --set`) go to every sweep: SETTINGS=sim.checkpoint_every=5000
# lets a sweep cut off by the budget resume from its last checkpoint on the same machine.
set -u
sets=()
for setting in ${SETTINGS:-}; do sets+=(--set "$setting"); done
budget=${1:?usage: scripts/device_gallery.sh SECONDS NAME...}
shift
out=${OUT:?set OUT to the directory that receives the results}
end=$((SECONDS + budget))
python -c "import jax; print(jax.default_backend(), jax.devices())"
for name in "$@"; do
    left=$((end - SECONDS - 20))  # 20 s kept for the archive
    if [ "$left" -le 60 ]; then
        echo "budget spent: $name and the rest not started"
        break
    fi
    echo "== $name at paper scale ($left s left)"
    timeout --signal=TERM --kill-after=15 "$left" python scripts/gallery.py --scale paper ${sets[@]+"${sets[@]}"} "$name"
done
mkdir -p "$out"
{
    echo docs/gallery.md
    echo docs/gallery/records
    [ -d docs/gallery/paper ] && echo docs/gallery/paper
    [ -d outputs/gallery/paper ] && find outputs/gallery/paper -name results.csv -o -name claims.md -o -name '*.log'
} | tar -czf "$out/gallery.tar.gz" -T -
echo "archived to $out/gallery.tar.gz"
