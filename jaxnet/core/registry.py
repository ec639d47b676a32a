"""Registries keyed by config name: one mechanism for every named choice of the config
(topologies, traffic patterns, routing schemes, VC policies, selections, flow controls,
injection policies, path and table algorithms). A registry is built from an explicit
mapping, written where its entries are listed (a package's `__init__`, or the module that
defines them all); nothing registers itself on import.

A config group is a mapping with `name` plus the entry's keyword arguments (`build`);
a plain option is just a name (`get`). Unknown names and keys are refused with the same
one-line error everywhere, naming the closest valid names."""
from __future__ import annotations

import difflib
import inspect
from typing import Any, Callable, Iterator, Mapping

from jaxnet.core.validate import require


def closest(name: object, valid) -> str:
    """'; did you mean x?' for the valid name closest to `name`, or ''."""
    found = difflib.get_close_matches(str(name), [str(v) for v in valid], n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(found)}?" if found else ""


class Registry:
    """The entries of one config group or option, keyed by config name.

    `leading` is the number of positional arguments every builder takes before its
    config keys (e.g. a traffic pattern's topology and random generator); `common` the keys
    every entry of the group accepts that are applied around the builders, not passed to
    them (e.g. a topology's `faults`)."""

    def __init__(self, group: str, entries: Mapping[str, Any], leading: int = 0, common: tuple[str, ...] = ()):
        self.group = group
        self.leading = leading
        self.common = tuple(common)
        self._entries = dict(entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> Any:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self):
        return self._entries.keys()

    def items(self):
        return self._entries.items()

    def get(self, name: object, where: str | None = None) -> Any:
        """The entry `name`, or a ValueError naming `where` (default: the group), the value
        and the valid names."""
        require(name in self._entries, where or self.group, name,
                f"one of {sorted(self._entries)}{closest(name, self._entries)}")
        return self._entries[name]

    def options(self, name: str) -> list[str]:
        """The config keys entry `name` accepts (besides `name`)."""
        params = list(inspect.signature(self._entries[name]).parameters.values())[self.leading:]
        return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    def split(self, cfg: Mapping, where: str | None = None) -> tuple[str, dict]:
        """(name, keyword arguments) of a config group, checked against the entry; errors
        name the parameter as `<where>.<key>` (default: the group)."""
        where = where or self.group
        require(isinstance(cfg, Mapping), where, cfg, "a config group with a `name`")
        params = {k: v for k, v in cfg.items() if k not in self.common}
        name = params.pop("name", None)
        self.get(name, f"{where}.name")
        accepted = self.options(name)
        for key in params:
            require(key in accepted, f"{where}.{key}", params[key],
                    f"{self.group}={name} takes only {sorted(accepted)}{closest(key, accepted)}")
        return name, params

    def build(self, cfg: Mapping, *leading: Any, where: str | None = None) -> Any:
        """Call the entry a config group names with the leading arguments and its keys."""
        name, params = self.split(cfg, where)
        builder: Callable[..., Any] = self._entries[name]
        return builder(*leading, **params)
