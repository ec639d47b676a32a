#!/usr/bin/env bash
# What a GPU machine without network access needs from this one before the paper-scale gallery
# runs there (docs/gallery.md, "Paper scale"), made in two ignored folders a device call carries:
#
#   bash scripts/prepare_device.sh NAME...
#
#   .whl       the configuration packages as wheels, at the versions installed here (hydra-core,
#              omegaconf and antlr4-python3-runtime, whose wheel pip builds from its sources);
#              install them there with `pip install --no-index --no-deps --target DIR .whl/*.whl`
#              and put DIR on PYTHONPATH;
#   .netcache  the paper-scale networks of the figures NAME... (`gallery.py --build-only`), for
#              JAXNET_NETWORK_CACHE=$PWD/.netcache there. A network file over MAX_NETWORK_MB
#              (default 32) is left out, so that the call stays within its size limit: that
#              network is built on the device.
set -eu
[ "$#" -gt 0 ] || { echo "usage: bash scripts/prepare_device.sh NAME...  (figures, as gallery.py names them)" >&2; exit 2; }
cd "$(dirname "$0")/.."
max_mb=${MAX_NETWORK_MB:-32}
packages=$(python - <<'EOF'
from importlib.metadata import version
print(" ".join(f"{name}=={version(name)}" for name in ("hydra-core", "omegaconf", "antlr4-python3-runtime")))
EOF
)
rm -rf .whl
python -m pip wheel --quiet --no-deps --wheel-dir .whl $packages
JAXNET_NETWORK_CACHE="$PWD/.netcache" python scripts/gallery.py --build-only --scale paper "$@"
find .netcache -type f -size +"${max_mb}"M -print -delete | sed 's/^/left out (the device builds it): /'
du -sh .whl .netcache
