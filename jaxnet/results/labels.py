"""Labels as a paper prints them: routing, traffic pattern and network names, and the
parameters that tell curves apart (`λ=2`, `Ĥ`, `4 VCs`), never raw config text such as
`polarized, strong=False`.

`curve_labels` names each of a figure's configurations by its routing and the parameters
in which it differs from the others (a routing's own parameters are compared only among
curves of that routing, so 8-KSP's `seed` never shows next to Minimal)."""
from __future__ import annotations

from typing import Any, Callable, Mapping

ROUTING_NAMES = {
    "minimal": "Minimal",
    "source_minimal": "Source minimal",
    "dragonfly_minimal": "Hierarchical minimal",
    "valiant": "Valiant",
    "valiant_recomp": "Valiant-Recomp",
    "rval": "RVAL",
    "rval_recomp": "RVAL-Recomp",
    "ksp": "KSP",
    "allpaths": "AllPaths",
    "polarized": "Polarized",
    "ugal": "UGAL",
    "omni": "Omni-dimensional",
    "dor": "DOR",
    "table": "Path table",
    "torus_table": "Torus table",
}

PATTERN_NAMES = {
    "uniform": "Uniform",
    "uniform_other_router": "Uniform (other routers)",
    "server_permutation": "Random server permutation",
    "neighbour_permutation": "Router permutation to neighbour",
    "neighbour": "Neighbour",
    "switch_permutation": "Switch permutation",
    "antmill": "Ant Mill",
    "adv_group": "ADV",
    "adv_local": "ADV-Local",
    "hot_region": "HOT",
    "tornado": "Tornado",
    "transpose": "Transpose",
    "bit_complement": "Bit complement",
    "all_to_all": "All to all",
    "demand": "Demand matrix",
    "destination_table": "Destination table",
    "mixture": "Mixture",
}

TOPOLOGY_NAMES = {
    "rrg": "RRG", "dragonfly": "Dragonfly", "slimfly": "Slim Fly", "projective": "Projective",
    "demiprojective": "Demi-projective", "hamming": "Hamming", "torus": "Torus", "mesh": "Mesh",
    "file": "Graph",
}


def _plural(n, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


# dotted config key -> its text on a figure ("" leaves it out: the default variant)
PARAMETERS: dict[str, Callable[[Any], str]] = {
    "routing.strong": lambda v: "strong" if v else "",
    "routing.base": lambda v: f"over {ROUTING_NAMES.get(v, v)}",
    "routing.threshold": lambda v: f"T={v}",
    "routing.algorithm": lambda v: str(v).upper() if v in ("bfs", "sssp") else str(v).capitalize(),
    "routing.weights": lambda v: f"{v} weights",
    "router.vcs": lambda v: f"{v} VCs",
    "router.selection": lambda v: str(v).replace("_", " "),
    "router.injection_buffers": lambda v: "all VCs inject" if v is None else _plural(v, "injection buffer",
                                                                                     "injection buffers"),
    "router.injection_policy": lambda v: str(v).upper(),
    "router.packet_size": lambda v: f"L={v}",
    "router.crossbar_speedup": lambda v: f"speedup {v}",
    "router.vc_policy": lambda v: f"VC policy {v}",
    "traffic.lam": lambda v: f"λ={v}",
    "traffic.unique": lambda v: "H" if v else "Ĥ",
    "traffic.delta": lambda v: f"δ={v}",
}
IN_NAME = {"routing.k"}  # parameters a routing's name already shows (8-KSP)


def _value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "×".join(map(str, value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def parameter(key: str, value: Any) -> str:
    """One parameter as a figure shows it: `traffic.lam` 2 -> `λ=2`, `router.vcs` 4 -> `4 VCs`,
    others as `name=value` (a true flag as its name)."""
    if key in PARAMETERS:
        return PARAMETERS[key](value)
    short = key.rsplit(".", 1)[-1].replace("_", " ")
    if isinstance(value, bool):
        return short if value else f"no {short}"
    return f"{short}={_value(value)}"


def routing_name(routing: Mapping) -> str:
    """`{name: ksp, k: 8}` -> `8-KSP`; `{name: polarized}` -> `Polarized`."""
    name = routing.get("name", "")
    text = ROUTING_NAMES.get(name, str(name))
    return f"{routing.get('k', '')}-{text}" if name == "ksp" else text


def pattern_name(pattern: Mapping) -> str:
    """A traffic pattern as the papers name it: `Ant Mill (Ĥ,2)`, `ADV+1`, `Switch permutation,
    distance 2`, `Uniform`."""
    name = pattern.get("name", "")
    text = PATTERN_NAMES.get(name, str(name).replace("_", " ").capitalize())
    if name == "antmill":
        return f"{text} ({'H' if pattern.get('unique', True) else 'Ĥ'},{pattern.get('lam', 1)})"
    if name == "adv_group":
        return f"{text}+{pattern.get('offset', 1)}"
    if name == "switch_permutation":
        return f"{text}, distance {pattern.get('distance', 1)}"
    return text


def topology_name(topology: Mapping) -> str:
    """A network as the papers describe it: `RRG 64/8, p=4`, `Dragonfly a=4 h=2, p=2`,
    `Hamming 4×4×4, p=4`, `Projective PG(2,3), p=2`."""
    name = topology.get("name", "")
    text = TOPOLOGY_NAMES.get(name, str(name))
    size = {
        "rrg": lambda t: f"{t.get('routers')}/{t.get('degree')}",
        "dragonfly": lambda t: f"a={t.get('a')} h={t.get('h')}",
        "slimfly": lambda t: f"q={t.get('q')}",
        "projective": lambda t: f"PG(2,{t.get('q')})",
        "demiprojective": lambda t: f"q={t.get('q')}",
        "hamming": lambda t: _value(t.get("sides")),
        "torus": lambda t: _value(t.get("sides")),
        "mesh": lambda t: _value(t.get("sides")),
        "file": lambda t: str(t.get("path", "")).rsplit("/", 1)[-1],
    }.get(name)
    servers = topology.get("servers_per_router")
    return (" ".join(filter(None, [text, size(topology) if size else ""])) + (f", p={servers}" if servers else "")
            + _faults_text(topology.get("faults")))


def _faults_text(faults) -> str:
    """', 10% of links failed' for a `topology.faults` mapping ('' for none)."""
    if not isinstance(faults, Mapping):
        return ""
    if faults.get("fraction") is not None:
        return f", {100 * float(faults['fraction']):g}% of links failed" if float(faults["fraction"]) else ""
    count = faults.get("count") if faults.get("count") is not None else len(faults.get("links") or [])
    return f", {count} link{'s' if count != 1 else ''} failed" if count else ""


def flatten(config: Mapping, prefix: str = "") -> dict:
    """{'router': {'vcs': 4}} -> {'router.vcs': 4}."""
    out = {}
    for key, value in config.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            out.update(flatten(value, dotted))
        else:
            out[dotted] = value
    return out


def _differing(configs: Mapping[str, dict]) -> dict[str, list[str]]:
    """curve -> the (flat) keys in which it differs from the others; a group's parameters
    (`routing.k`) are compared only among curves with the same `<group>.name`."""
    out = {}
    for curve, config in configs.items():
        keys = []
        for key in config:
            name_key = f"{key.split('.', 1)[0]}.name"
            peers = [c for c in configs.values()
                     if key == name_key or c.get(name_key) == config.get(name_key)]
            if len({repr(c.get(key)) for c in peers}) > 1:
                keys.append(key)
        out[curve] = keys
    return out


def _parts(config: Mapping, keys: list[str]) -> list[str]:
    """The texts of the differing `keys` of a (nested) config: a network as its description;
    names, and parameters a name shows (`routing.k`), left out."""
    flat = flatten(config)
    parts = [topology_name(config.get("topology") or {})] if any(k.startswith("topology.") for k in keys) else []
    parts += [parameter(k, flat[k]) for k in keys
              if not k.startswith("topology.") and not k.endswith(".name") and k not in IN_NAME]
    return [p for p in dict.fromkeys(parts) if p]


def curve_labels(configs: Mapping[str, Mapping]) -> dict[str, str]:
    """curve -> label, from each curve's (nested) configuration: the routing's name and, where
    curves share it, the parameters in which they differ in brackets (`Polarized (best
    first)`, `RVAL (4 injection buffers)`); a differing network shows as its description."""
    configs = {curve: _resolved(config) for curve, config in configs.items()}
    heads = {curve: routing_name(config["routing"]) if (config.get("routing") or {}).get("name") else ""
             for curve, config in configs.items()}
    return distinguish(heads, configs)


def _resolved(config: Mapping) -> Mapping:
    """The configuration with `router.selection: auto` as the scheme's own order (what ran)."""
    from jaxnet.routing import ROUTINGS

    router, name = config.get("router") or {}, (config.get("routing") or {}).get("name")
    if router.get("selection") != "auto" or name not in ROUTINGS:
        return config
    return {**config, "router": {**router, "selection": ROUTINGS[name].selection}}


def distinguish(names: Mapping[str, str], configs: Mapping[str, Mapping]) -> dict[str, str]:
    """Names made unique: where several ids share a name, the parameters in which their
    (nested) configs differ are added in brackets (`Minimal (8 VCs)`)."""
    out = dict(names)
    for name in set(names.values()):
        sharing = [i for i, n in names.items() if n == name]
        if len(sharing) > 1:
            differing = _differing({i: flatten(configs[i]) for i in sharing})
            for i in sharing:
                out[i] = _join(name, _parts(configs[i], differing[i]))
    return out


def _join(head: str, parts: list[str]) -> str:
    if head and parts:
        return f"{head} ({', '.join(parts)})"
    return head or ", ".join(parts) or "run"


def panel_title(label: str, pattern: Mapping | None = None) -> str:
    """A traffic panel's title: a pattern's own name (a plain run's label is its config name)
    written as the papers do, an experiment's label as given, capitalised."""
    if pattern and label == pattern.get("name"):
        return pattern_name(pattern)
    return label[:1].upper() + label[1:]


def figure_text(text: str) -> str:
    """Config text as printed: `<=` and `>=` as ≤ and ≥."""
    return str(text).replace("<=", "≤").replace(">=", "≥")
