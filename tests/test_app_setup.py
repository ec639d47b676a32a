"""What the apps set up before JAX starts (`jaxnet.core.devices`): host devices on request
and the persistent compilation cache, each overridable by the variable JAX itself reads; and
how Hydra reads jaxnet's config files (`hydra_plugins/jaxnet_configs`): each parsed once; and
that an installed wheel carries them."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

SHOW = "import os, jaxnet.cli; print(os.environ.get('JAX_COMPILATION_CACHE_DIR'), os.environ.get('XLA_FLAGS'))"


def _setup(**env):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("JAX_COMPILATION_CACHE_DIR", "JAXNET_XLA_CACHE", "XLA_FLAGS", "JAXNET_HOST_DEVICES")}
    out = subprocess.run([sys.executable, "-c", SHOW], env={**clean, **env}, capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


@pytest.mark.parametrize("env, cache", [
    ({"XDG_CACHE_HOME": "/tmp/xdg"}, "/tmp/xdg/jaxnet/xla"),
    ({"JAXNET_XLA_CACHE": "/tmp/mine"}, "/tmp/mine"),
    ({"JAXNET_XLA_CACHE": "off"}, "None"),
    ({"JAX_COMPILATION_CACHE_DIR": "/tmp/jax-own", "JAXNET_XLA_CACHE": "/tmp/mine"}, "/tmp/jax-own"),
])
def test_compilation_cache_directory(env, cache):
    assert _setup(**env)[0] == cache


def test_host_devices_only_on_request():
    assert _setup()[1] == "None"
    assert _setup(JAXNET_HOST_DEVICES="2")[1] == "--xla_force_host_platform_device_count=2"


def test_config_files_are_parsed_once_per_process_and_again_after_a_change(tmp_path, monkeypatch):
    """jaxnet's apps read `conf/` through a file source that parses each file once (Hydra's
    own parses it for every job composed); what it hands out is the file's config, a copy
    that a caller may change, and a file that changes is parsed again. Other directories of
    the search path keep Hydra's file source."""
    from hydra._internal.config_search_path_impl import ConfigSearchPathImpl
    from hydra._internal.sources_registry import SourcesRegistry
    from hydra.core.plugins import Plugins
    from hydra.plugins.search_path_plugin import SearchPathPlugin
    from omegaconf import OmegaConf

    from jaxnet.cli.common import CONF_DIR
    from jaxnet.cli.experiment import compose_jobs

    compose_jobs(["+experiment=valiant/fig5"])
    source_type = SourcesRegistry.instance().resolve("jaxnetfile")  # the class Hydra's plugin scan registered
    assert str(Path(CONF_DIR) / "experiment" / "valiant" / "fig5.yaml") in {key[0] for key in source_type.parsed}

    parses = []
    load = OmegaConf.load
    monkeypatch.setattr(OmegaConf, "load", lambda file: parses.append(file) or load(file))
    (tmp_path / "a.yaml").write_text("x: 1\ny: [2, 3]\n")
    source = source_type("main", f"jaxnetfile://{tmp_path}")
    source.load_config("a").config.x = 5
    assert OmegaConf.to_container(source.load_config("a").config) == {"x": 1, "y": [2, 3]} and len(parses) == 1
    (tmp_path / "a.yaml").write_text("x: 10\n")
    assert OmegaConf.to_container(source.load_config("a").config) == {"x": 10} and len(parses) == 2

    plugin, = [p for p in Plugins.instance().discover(SearchPathPlugin) if p.__name__ == "JaxnetConfigsSearchPath"]
    search_path = ConfigSearchPathImpl()
    search_path.append("main", CONF_DIR)
    search_path.append("other", str(tmp_path))
    plugin().manipulate_search_path(search_path)
    assert [e.path for e in search_path.get_path()] == [f"jaxnetfile://{CONF_DIR}", str(tmp_path)]


def test_a_built_wheel_carries_the_config_files_and_its_apps_find_them(tmp_path):
    """`pip install .` (not editable) installs a wheel: it carries `conf/` as `jaxnet/conf`
    (the package's link to it), where the apps and `jaxnet.build` read it."""
    import shutil
    import zipfile

    root = Path(__file__).resolve().parents[1]
    source = tmp_path / "source"  # a copy, so that the build leaves the checkout as it is
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, source / name)
    for name in ("jaxnet", "hydra_plugins", "conf"):
        shutil.copytree(root / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "wheel"),
                    str(source)], check=True, capture_output=True)
    wheel, = (tmp_path / "wheel").glob("jaxnet-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        carried = {name for name in archive.namelist() if name.startswith("jaxnet/conf/")}
        archive.extractall(tmp_path / "site")
    assert carried == {f"jaxnet/conf/{p.relative_to(root / 'conf')}" for p in (root / "conf").rglob("*.yaml")}

    app = ("import sys, jaxnet; from jaxnet.core.configs import CONF_DIR; print(CONF_DIR); "
           "print(jaxnet.build.topology({'name': 'dragonfly'}).servers_per_router); "
           "from jaxnet.cli.simulate import script; sys.argv = ['jaxnet', '--cfg', 'job']; script()")
    done = subprocess.run([sys.executable, "-c", app], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path / "site")})
    conf_dir, servers, *job = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert conf_dir == str(tmp_path / "site" / "jaxnet" / "conf") and servers == "2"
    assert "topology:" in job and "routing:" in job
