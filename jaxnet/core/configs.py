"""Where jaxnet's config files (the Hydra config groups) live: `jaxnet/conf`, a link to the
checkout's top-level `conf/`, so that a built wheel carries them inside the package. A copy
of a checkout that drops links reads the top-level `conf/` itself."""
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
_PACKAGED = _PACKAGE / "conf"
CONF_DIR = str(_PACKAGED.resolve() if _PACKAGED.is_dir() else _PACKAGE.parent / "conf")
