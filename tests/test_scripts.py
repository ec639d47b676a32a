"""Every script under scripts/ imports against the current package (names they use exist)."""
import importlib.util
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_script_imports(path, monkeypatch):
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # top level only: main() runs under __name__ == "__main__"
    assert callable(getattr(module, "main", None)), f"{path.name} has no main()"


def test_profile_charges_the_cycle_to_its_phases(monkeypatch):
    """scripts/profile.py maps the profiled XLA operations back to the engine's phases: on a
    tiny network most of the operations run land on named phases, routing among them. Counted
    in operations, not time: the time shares move with the load on the machine."""
    path = Path(__file__).resolve().parents[1] / "scripts" / "profile.py"
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location("script_profile", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = module.profile("hamming", "minimal", 4, 0.5, cycles=20)
    phases = report["by_phase_us_per_cycle"]
    assert report["us_per_cycle_in_operations"] > 0 and report["us_per_cycle_wall_profiled"] > 0
    assert {"route", "release_slots", "send_on_links", "generate"} <= set(phases)
    assert report["operations_in_a_phase"] > 0.6 * report["operations_run"]
    assert all(chain.startswith("cycle_step:") for chain in report["by_call_chain_us_per_cycle"])
