"""Registries keyed by config name: one mechanism for topologies, traffic patterns and
routing schemes. A config group is a mapping with `name` plus the entry's keyword
arguments; unknown keys are refused with the same one-line error everywhere."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterator, Mapping

from jaxnet.core.validate import require


class Registry:
    """Builders (functions or classes) of one config group, keyed by config name.

    `leading` is the number of positional arguments every builder takes before its
    config keys (e.g. a traffic pattern's topology and random generator)."""

    def __init__(self, group: str, leading: int = 0):
        self.group = group
        self.leading = leading
        self._entries: dict[str, Callable[..., Any]] = {}

    def register(self, name: str):
        """Decorator: make a builder available as `<group>=<name>`."""

        def wrap(builder):
            self._entries[name] = builder
            return builder

        return wrap

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self):
        return self._entries.keys()

    def items(self):
        return self._entries.items()

    def options(self, name: str) -> list[str]:
        """The config keys entry `name` accepts (besides `name`)."""
        params = list(inspect.signature(self._entries[name]).parameters.values())[self.leading:]
        return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    def split(self, cfg: Mapping, where: str | None = None) -> tuple[str, dict]:
        """(name, keyword arguments) of a config group, checked against the entry; errors
        name the parameter as `<where>.<key>` (default: the group)."""
        where = where or self.group
        require(isinstance(cfg, Mapping), where, cfg, "a config group with a `name`")
        params = dict(cfg)
        name = params.pop("name", None)
        require(name in self._entries, f"{where}.name", name, f"one of {sorted(self._entries)}")
        accepted = self.options(name)
        for key in params:
            require(key in accepted, f"{where}.{key}", params[key],
                    f"{self.group}={name} takes only {sorted(accepted)}")
        return name, params

    def build(self, cfg: Mapping, *leading: Any, where: str | None = None) -> Any:
        """Call the entry a config group names with the leading arguments and its keys."""
        name, params = self.split(cfg, where)
        return self._entries[name](*leading, **params)
