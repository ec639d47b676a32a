"""jaxnet's config files parsed once per process. Hydra parses every file of a config again
for each job it composes (twice per job of a multirun: once to group the sweep's jobs, once
to run each), which for a large experiment file costs more than the rest of composing. Here
the search path's entry for jaxnet's `conf/` is read through a file source that keeps each
file's parsed config, keyed by path, modification time and size, and hands out copies
(unpickled: a deep copy of an OmegaConf config costs many times more)."""
from __future__ import annotations

import os
import pickle
from typing import ClassVar

from hydra._internal.core_plugins.file_config_source import FileConfigSource
from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.config_source import ConfigResult
from hydra.plugins.search_path_plugin import SearchPathPlugin

from jaxnet.core.configs import CONF_DIR


class ParsedOnceConfigSource(FileConfigSource):
    """A directory of YAML configs, as Hydra's file source reads it, each file parsed once
    per process (again after it changes)."""

    parsed: ClassVar[dict[tuple[str, int, int], tuple[ConfigResult, bytes]]] = {}  # with its config pickled

    @staticmethod
    def scheme() -> str:
        return "jaxnetfile"

    def load_config(self, config_path: str) -> ConfigResult:
        full_path = os.path.realpath(os.path.join(self.path, self._normalize_file_name(config_path)))
        try:
            stat = os.stat(full_path)
        except OSError:  # Hydra's own error
            return super().load_config(config_path)
        key = (full_path, stat.st_mtime_ns, stat.st_size)
        if key not in self.parsed:
            result = super().load_config(config_path)
            self.parsed[key] = result, pickle.dumps(result.config)
        result, config = self.parsed[key]
        return ConfigResult(provider=result.provider, path=result.path, config=pickle.loads(config),
                            header=dict(result.header))


class JaxnetConfigsSearchPath(SearchPathPlugin):
    """Reads jaxnet's `conf/`, the primary config directory of its apps, through
    `ParsedOnceConfigSource`; other apps' search paths are left as they are."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        for element in search_path.get_path():
            if element.provider == "main" and element.path.removeprefix("file://") == CONF_DIR:
                element.path = f"{ParsedOnceConfigSource.scheme()}://{CONF_DIR}"
