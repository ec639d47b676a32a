"""What the apps set up before JAX starts (`jaxnet.core.devices`): host devices on request
and the persistent compilation cache, each overridable by the variable JAX itself reads."""
import os
import subprocess
import sys

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
