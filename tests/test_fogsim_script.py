"""scripts/fogsim_valiant.py: FOGSim configured from the Restricted Valiant paper's Table I,
run through a stand-in binary that checks the configuration it gets and answers as FOGSim's
output file does (docs/fidelity.md, "PERM past saturation")."""
import csv
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]

# A stand-in for FOGSim: reads `key=value` lines under [CONFIG], refuses a configuration that
# misses one of the keys FOGSim asserts for this run, counts its runs, and writes an output
# file whose accepted load saturates at 0.45.
STAND_IN = r'''#!{python}
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0] == "[CONFIG]"
conf = dict(line.split("=", 1) for line in lines[1:])
required = ["P", "A", "H", "MaxCycles", "ArbiterIterations", "InjectionQueueLength", "LocalQueueLength",
            "GlobalQueueLength", "Probability", "Seed", "OutputFileName", "LocalLinkTransmissionDelay",
            "GlobalLinkTransmissionDelay", "InjectionDelay", "PacketSize", "FlitSize", "GlobalChannels",
            "LocalLinkChannels", "InjectionChannels", "PalmTreeConfiguration", "Switch", "XbarDelay",
            "OutQueueLength", "Traffic", "deadlock_avoidance", "routing"]
missing = [k for k in required if k not in conf]
assert not missing, missing
with open("{log}", "a") as log:
    log.write(" ".join(f"{{k}}={{conf[k]}}" for k in ("A", "Probability", "Seed", "OutQueueLength")) + "\n")
load = float(conf["Probability"]) / 100
with open(conf["OutputFileName"], "w") as out:
    out.write(f"STATISTICS\nApplied Load: {{load}} phits/(node-cycle)\n"
              f"Accepted Load: {{min(load, 0.45)}} phits/(node-cycle)\nAverage Distance: 2.5\n"
              f"Average Total Latency: 100.5\n")
'''


@pytest.fixture(scope="module")
def fogsim_script():
    return load_script(ROOT / "scripts" / "fogsim_valiant.py")


def test_the_configuration_is_table_i_in_cycles_of_20_ns(fogsim_script):
    text = fogsim_script.config_text("a12h6p6", "VAL_ANY", "RANDOMPERMUTATION", 0.45, 3, "out", {"OutQueueLength": "80"})
    conf = dict(line.split("=", 1) for line in text.splitlines()[1:])
    assert (conf["A"], conf["H"], conf["P"]) == ("12", "6", "6")  # 876 switches, 5256 hosts
    assert conf["PacketSize"] == conf["FlitSize"] == "10"  # 1000 bytes at 40 Gbps: 200 ns = 10 cycles
    assert conf["XbarDelay"] == "10" and conf["InternalSpeedup"] == "2"  # switch 200 ns, speedup 2x
    assert (conf["LocalLinkTransmissionDelay"], conf["GlobalLinkTransmissionDelay"]) == ("2", "20")  # 40 / 400 ns
    assert conf["InjectionQueueLength"] == "2000" and conf["LocalQueueLength"] == conf["GlobalQueueLength"] == "1000"
    assert (conf["LocalLinkChannels"], conf["GlobalChannels"], conf["InjectionChannels"]) == ("4", "2", "1")
    assert (conf["WarmupCycles"], conf["MaxCycles"]) == ("5000", "15000")  # 500 + 1500 packet times
    assert conf["Probability"] == "45" and conf["Seed"] == "3" and conf["OutQueueLength"] == "80"


def test_a_sweep_writes_each_run_and_a_rerun_skips_them(fogsim_script, tmp_path):
    log = tmp_path / "runs.log"
    binary = tmp_path / "fogsim"
    binary.write_text(STAND_IN.format(python=sys.executable, log=log))
    binary.chmod(0o755)
    out = tmp_path / "data" / "fogsim.csv"
    command = [sys.executable, str(ROOT / "scripts" / "fogsim_valiant.py"), "--fogsim", str(binary),
               "--loads", "0.3,0.6,1.0", "--seeds", "1,2", "--set", "OutQueueLength=80", "--out", str(out)]
    first = subprocess.run(command, capture_output=True, text=True, check=True)
    assert len(log.read_text().splitlines()) == 6
    assert "A=4 Probability=30 Seed=1 OutQueueLength=80" in log.read_text()
    rows = list(csv.DictReader(open(out)))
    assert [(r["seed"], r["offered_load"], r["accepted_load"]) for r in rows][:3] == [
        ("1", "0.3", "0.3"), ("1", "0.6", "0.45"), ("1", "1.0", "0.45")]
    assert {r["settings"] for r in rows} == {"OutQueueLength=80"} and rows[0]["hops"] == "2.5"
    assert "seed 2: accepted at offered 1 over the peak 1.0000" in first.stdout
    subprocess.run(command, capture_output=True, text=True, check=True)
    assert len(log.read_text().splitlines()) == 6  # nothing simulated again
    other = subprocess.run(command[:-4] + ["--out", str(out)], capture_output=True, text=True, check=True)
    assert len(log.read_text().splitlines()) == 12 and "over the peak" in other.stdout  # other settings: new rows


@pytest.mark.parametrize("arguments, message", [(["--fogsim", "nothing"], "not an executable file"),
                                                (["--loads", "0.3,x"], "comma-separated numbers"),
                                                (["--loads", "1.5"], "offered loads in (0, 1]"),
                                                (["--set", "OutQueueLength"], "KEY=VALUE")])
def test_bad_input_is_one_clear_error(tmp_path, arguments, message):
    binary = tmp_path / "fogsim"
    binary.write_text(f"#!{sys.executable}\n")
    binary.chmod(0o755)
    command = [sys.executable, str(ROOT / "scripts" / "fogsim_valiant.py"), "--fogsim", str(binary), *arguments]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_failed_fogsim_run_is_one_line_with_its_last_words(tmp_path):
    binary = tmp_path / "fogsim"
    binary.write_text(f"#!{sys.executable}\nimport sys\nprint('fogsim: obl.cc:163: Assertion failed.')\nsys.exit(6)\n")
    binary.chmod(0o755)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "fogsim_valiant.py"), "--fogsim", str(binary),
                             "--loads", "0.3", "--seeds", "1", "--out", str(tmp_path / "f.csv")],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "FOGSim stopped (exit 6) at offered load 0.3, seed 1" in result.stderr and "Assertion failed" in result.stderr
    assert not (tmp_path / "f.csv").exists()
