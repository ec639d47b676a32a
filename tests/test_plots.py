"""Figures fit for a paper, from synthetic rows (no simulation): every requested format, PNGs
of at least 150 dpi, labels as the papers print them, shared y-ranges, nothing cut off, and
`jaxnet-plot` writing where it says, with one-line errors for files that are not results."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from synthetic import experiment_rows, plain_job, point, rows_of_jobs

from jaxnet.cli import paths as paths_app
from jaxnet.cli import plot
from jaxnet.results import collect, labels, plots
from jaxnet.results.table import config_id, decorate, write_rows
from jaxnet.topology import build_topology

LOADS = "sim.loads=[0.2,0.6,1.0]"


@pytest.fixture(scope="module")
def plain_rows():
    """Rows of four plain runs: Polarized in both selection orders (its default, auto, is
    best_first), 8-KSP, Valiant with 4 VCs."""
    jobs = [plain_job("routing=polarized", "router.selection=available_first", LOADS),
            plain_job("routing=polarized", LOADS), plain_job("routing=ksp", LOADS),
            plain_job("routing=valiant", "router.vcs=4", LOADS)]
    return rows_of_jobs(jobs)


# ---- labels ------------------------------------------------------------------------------

def test_parameters_are_written_as_a_paper_prints_them():
    assert labels.parameter("traffic.lam", 2) == "λ=2"
    assert labels.parameter("traffic.unique", False) == "Ĥ"
    assert labels.parameter("router.vcs", 8) == "8 VCs"
    assert labels.parameter("router.selection", "best_first") == "best first"
    assert labels.parameter("router.injection_buffers", 1) == "1 injection buffer"
    assert labels.parameter("routing.strong", False) == ""  # the default variant says nothing
    assert labels.parameter("sim.warmup", 500) == "warmup=500"
    assert labels.routing_name({"name": "ksp", "k": 8}) == "8-KSP"
    assert labels.routing_name({"name": "source_minimal"}) == "Source minimal"
    assert labels.pattern_name({"name": "antmill", "lam": 2, "unique": False}) == "Ant Mill (Ĥ,2)"
    assert labels.pattern_name({"name": "adv_group", "offset": 1}) == "ADV+1"
    assert labels.topology_name({"name": "rrg", "routers": 64, "degree": 8, "servers_per_router": 4}) == "RRG 64/8, p=4"
    assert labels.topology_name({"name": "hamming", "sides": [4, 4, 4], "servers_per_router": 4}) == \
        "Hamming 4×4×4, p=4"


def test_curve_labels_name_the_routing_and_only_what_tells_curves_apart():
    configs = {
        "a": {"routing": {"name": "polarized", "strong": False}, "router": {"selection": "best_first", "vcs": 4}},
        "b": {"routing": {"name": "polarized", "strong": False}, "router": {"selection": "available_first", "vcs": 4}},
        "c": {"routing": {"name": "valiant", "base": "minimal"}, "router": {"selection": "available_first", "vcs": 4}},
        "d": {"routing": {"name": "ksp", "k": 8, "seed": 1}, "router": {"selection": "available_first", "vcs": 8}},
        "e": {"routing": {"name": "ksp", "k": 4, "seed": 1}, "router": {"selection": "available_first", "vcs": 8}},
    }
    assert labels.curve_labels(configs) == {"a": "Polarized (best first)", "b": "Polarized (available first)",
                                            "c": "Valiant", "d": "8-KSP", "e": "4-KSP"}
    two_networks = {"x": {"routing": {"name": "minimal"}, "topology": {"name": "rrg", "routers": 32, "degree": 5}},
                    "y": {"routing": {"name": "minimal"}, "topology": {"name": "hamming", "sides": [4, 4]}}}
    assert labels.curve_labels(two_networks) == {"x": "Minimal (RRG 32/5)", "y": "Minimal (Hamming 4×4)"}


def test_plain_runs_get_readable_distinct_labels(plain_rows):
    names = collect.assign_curves(plain_rows, "traffic")
    assert list(names.values()) == ["Polarized (available first)", "Polarized (best first)", "8-KSP", "Valiant"]
    assert not any("=" in name or "strong" in name or "base" in name for name in names.values())


def test_curves_of_different_configurations_are_never_merged():
    """Two runs differing only in their VC count are two curves, labelled by the difference."""
    rows = rows_of_jobs([plain_job("router.vcs=4", LOADS), plain_job("router.vcs=8", LOADS)])
    names = collect.assign_curves(rows, "traffic")
    assert sorted(names.values()) == ["Minimal (4 VCs)", "Minimal (8 VCs)"]
    assert len({r["curve"] for r in rows}) == 2


def test_experiment_lines_keep_their_order_and_explicit_labels():
    rows = experiment_rows("polarized/fig4")
    names = collect.assign_curves(rows, "traffic")
    assert list(names.values()) == ["Minimal", "Source minimal", "Valiant", "8-KSP", "AllPaths", "Polarized",
                                    "Polarized (available first)"]
    rows = experiment_rows("valiant/fig4")
    assert list(dict.fromkeys(collect.assign_curves(rows, "traffic").values()))[:3] == [
        "RVAL (1 injection buffer)", "RVAL (2 injection buffers)", "RVAL (4 injection buffers)"]


def test_a_line_on_several_networks_is_one_label_one_colour_per_network_panel():
    rows = experiment_rows("polarized/fig8")
    titles = collect.assign_panels(rows, "network")
    names = collect.assign_curves(rows, "panel")
    assert set(names.values()) == {"Minimal", "Valiant", "Polarized", "Omni-dimensional"}
    assert len(names) == 13  # 3 lines x 4 networks + Omni on the Hamming graph: never averaged
    assert list(titles.values()) == ["Dragonfly a=4 h=2, p=2", "Hamming 4×4×4, p=4", "Projective PG(2,3), p=2",
                                     "Slim Fly q=5, p=4"]


def test_patterns_in_one_network_panel_are_curves_of_their_own():
    """Load curves in panels by network that hold two patterns draw each pattern as its own
    curve (never their average), labelled with the pattern."""
    rows = experiment_rows("antmill/ksp_switch_perm")
    titles = collect.assign_panels(rows, "network")
    # two samples of one RRG: their panels tell the samples apart
    assert list(titles.values()) == ["RRG 64/5, p=2 (seed=1)", "RRG 64/5, p=2 (seed=2)"]
    # one topology under several patterns: by the networks' names
    titles = collect.assign_panels(experiment_rows("gbamcf/weights"), "network")
    assert len(set(titles.values())) == len(titles) == 6
    assert titles["df_uniform"] == "Dragonfly a=4 h=2, p=2 (network=df_uniform)"
    assert collect.patterns_share_panels(rows, "panel")
    names = collect.assign_curves(rows, "panel", by_pattern=True)
    assert len(names) == 4  # 2 networks x 2 patterns
    assert set(names.values()) == {"8-KSP, uniform", "8-KSP, switch perm. 1"}
    for panel in {r["panel"] for r in rows}:
        curves = {r["curve"]: r["traffic"] for r in rows if r["panel"] == panel}
        assert sorted(curves.values()) == ["switch perm. 1", "uniform"]


def test_patterns_sharing_a_label_get_panels_of_their_own():
    rows = rows_of_jobs([plain_job("traffic=antmill", "traffic.lam=1", LOADS),
                         plain_job("traffic=antmill", "traffic.lam=2", "traffic.unique=false", LOADS)])
    titles = collect.assign_panels(rows, "traffic")
    assert sorted(titles.values()) == ["Ant Mill (H,1)", "Ant Mill (Ĥ,2)"]
    assert len({r["panel"] for r in rows}) == 2


# ---- figures -----------------------------------------------------------------------------

def _inside_figure(fig) -> None:
    """Everything the figure draws (titles, labels, legend, ticks) lies within it: nothing is cut off."""
    fig.canvas.draw()
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    width, height = fig.get_size_inches()
    assert drawn.x0 >= -0.01 and drawn.y0 >= -0.01, drawn
    assert drawn.x1 <= width + 0.01 and drawn.y1 <= height + 0.01, (drawn, width, height)


def test_throughput_panels_share_a_y_range_and_hold_every_value():
    rows = experiment_rows("valiant/fig2")
    titles = collect.assign_panels(rows, "traffic")
    names = collect.assign_curves(rows, "panel")
    rows.sort(key=lambda r: ["RVAL", "VAL", "MIN"].index(r["line"]))  # the legend follows the labels' order
    fig = plots.build_curves(rows, "throughput", "Restricted Valiant, Fig. 2 (small scale)", "panel",
                             [{"value": 0.3636, "label": "MIN HOT bound", "panel": "HOT"}], names, titles)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 4 and len({ax.get_ylim() for ax in axes}) == 1
    top = axes[0].get_ylim()[1]
    assert top >= max(float(r["accepted_load"]) for r in rows) and axes[0].get_ylim()[0] == 0
    assert [ax.get_title() for ax in axes] == ["UN", "ADV-Local", "HOT", "PERM"]
    legend = axes[-1].get_legend()  # beside the last panel of the first row, not below the figure
    fig.canvas.draw()
    assert legend.get_window_extent().x0 >= axes[-1].get_window_extent().x1
    assert [t.get_text() for t in legend.get_texts()] == ["MIN", "VAL", "RVAL"]
    _inside_figure(fig)


def test_a_long_title_is_wrapped_not_cut_off():
    rows = experiment_rows("antmill/fig5")
    titles = collect.assign_panels(rows, "network")
    fig = plots.build_bars(rows, "Ant Mill, Fig. 5: RRG k=3.7, minimal, 8-KSP, Polarized (Valiant as reference) "
                                 "(small scale) " * 2, "network", "traffic", [], collect.assign_curves(rows, "panel"), titles)
    _inside_figure(fig)


def test_no_bar_runs_past_its_axis():
    rows = experiment_rows("antmill/fig6")
    bounds = collect.experiment_of(rows)["bounds"]
    fig = plots.build_bars(rows, "bars", "network", "traffic", [b for b in bounds if b.get("scale") == "small"],
                           collect.assign_curves(rows, "network"))
    for ax in fig.axes:
        top = ax.get_ylim()[1]
        heights = [p.get_height() for p in ax.patches if np.isfinite(p.get_height())]
        assert heights and max(heights) < top
        assert all(line.get_ydata()[0] < top for line in ax.lines)  # the bounds' dashes
    _inside_figure(fig)


def test_path_count_histogram_keeps_the_tallest_stacked_bar_inside(tmp_path):
    topology = build_topology({"name": "dragonfly", "a": 3, "h": 2, "servers_per_router": 1})
    link_class = topology.link_class[topology.neighbor >= 0]
    # local links on 7 paths, global ones on 5: the tallest stack is capped by a zero-height bar,
    # whose bottom (a "sticky edge") leaves no margin above it unless the range is set
    counts = np.where(link_class == 0, 7, 5)
    panels = {"cyclic": counts, "random": counts + 1}
    fig = paths_app.histogram_figure(topology, panels)
    for ax in fig.axes:
        if ax.patches:
            tops = [p.get_y() + p.get_height() for p in ax.patches]
            assert 0 < max(tops) < ax.get_ylim()[1]
            assert ax.get_xlim()[0] < min(p.get_x() for p in ax.patches)
            assert max(p.get_x() + p.get_width() for p in ax.patches) < ax.get_xlim()[1]
    _inside_figure(fig)
    written = paths_app.save_histograms(topology, panels, tmp_path / "hist.png", ["png", "svg"])
    assert written == [tmp_path / "hist.png", tmp_path / "hist.svg"]
    assert Image.open(tmp_path / "hist.png").info["dpi"][0] >= 149.5


@pytest.mark.parametrize("formats", [["png", "pdf", "svg"], ["svg"]])
def test_every_figure_in_every_requested_format(tmp_path, formats):
    rows = experiment_rows("polarized/fig4")
    written = collect.write_outputs(rows, tmp_path, formats=formats)
    for kind in ("throughput", "latency", "jain", "hops"):
        for fmt in formats:
            assert tmp_path / f"{kind}.{fmt}" in written
        assert {p.suffix for p in tmp_path.glob(f"{kind}.*")} == {f".{f}" for f in formats}
    if "png" in formats:
        image = Image.open(tmp_path / "throughput.png")
        assert image.info["dpi"][0] >= 149.5 and image.size[0] >= 600
    if "pdf" in formats:
        assert (tmp_path / "throughput.pdf").read_bytes().startswith(b"%PDF")
    assert "<svg" in (tmp_path / "throughput.svg").read_text()
    assert (tmp_path / "claims.md").exists()


@pytest.mark.parametrize("formats", ["gif", [], ["png", "jpg"], {"png": 1}])
def test_unknown_formats_are_one_line_errors(formats):
    with pytest.raises(ValueError, match=r"^plot.formats=.* is invalid: a non-empty list of png, pdf, svg$"):
        plots.check_formats(formats)


# ---- jaxnet-plot -------------------------------------------------------------------------

def _run_dir(path, rows):
    path.mkdir(parents=True, exist_ok=True)
    write_rows(path / "results.csv", rows)
    return path


def _good(path, plain_rows):
    return _run_dir(path, plain_rows[:6])


def test_jaxnet_plot_writes_into_the_first_directory_and_prints_the_files(tmp_path, plain_rows, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = _good(tmp_path / "run", plain_rows)
    other = _run_dir(tmp_path / "other", plain_rows[6:])
    assert plot.main([str(run), str(other), "--formats", "png,svg"]) == 0
    out, err = capsys.readouterr()
    assert not list(tmp_path.glob("*.png"))  # nothing in the current directory
    printed = out.splitlines()[1:]
    assert str(run / "throughput.png") in printed and str(run / "throughput.svg") in printed
    assert all((tmp_path / p).exists() for p in printed) and not (run / "throughput.pdf").exists()
    assert "kept as it is" in err  # the run's own results.csv is not replaced by the merge
    assert plot.main([str(run), str(other), "--out", str(tmp_path / "merged")]) == 0
    out, _ = capsys.readouterr()
    assert str(tmp_path / "merged" / "results.csv") in out.splitlines()
    assert len(collect.load([tmp_path / "merged"])[0]) == len(plain_rows)


def _garbage(path):
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.csv").write_bytes(bytes(range(256)) * 8)
    return path


def _no_config_id(path, plain_rows):
    """A checksummed CSV without config_id (written by jaxnet's own writer)."""
    return _run_dir(path, [{k: v for k, v in r.items() if k != "config_id"} for r in plain_rows[:3]])


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


@pytest.mark.parametrize("make, reason", [(lambda p, r: _garbage(p), "not UTF-8 text"),
                                          (_no_config_id, "no config_id column")])
def test_jaxnet_plot_names_a_file_that_is_not_a_results_table(tmp_path, plain_rows, capsys, make, reason):
    bad = make(tmp_path / "bad", plain_rows)
    assert plot.main([str(bad)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("error: ") and str(bad / "results.csv") in line and reason in line
    assert "move it out of the way" in line
    # mixed with a good run: a warning naming it, and the good rows merged
    good = _good(tmp_path / "good", plain_rows)
    assert plot.main([str(good), str(bad), "--out", str(tmp_path / "merged")]) == 0
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("warning: ") and str(bad / "results.csv") in line and "left out" in line
    assert len(collect.load([tmp_path / "merged"])[0]) == 6


def test_jaxnet_plot_bad_arguments_are_one_line(tmp_path, plain_rows, capsys):
    good = _good(tmp_path / "good", plain_rows)
    assert plot.main([str(good), "--formats", "png,gif"]) == 2
    assert "--formats=" in _one_line(capsys.readouterr().err)
    assert plot.main([str(tmp_path / "nothing")]) == 2
    assert "no such file or directory" in _one_line(capsys.readouterr().err)
    elsewhere = _run_dir(tmp_path / "elsewhere", plain_rows[:2])  # would be overwritten
    assert plot.main([str(good), "--out", str(elsewhere)]) == 2
    assert "not among the inputs" in _one_line(capsys.readouterr().err)
    assert len(collect.load([elsewhere])[0]) == 2


def test_two_lines_of_one_configuration_both_keep_their_rows(tmp_path, plain_rows):
    """valiant/adv_local_buffers at paper scale: two lines whose settings coincide there are
    one configuration; merging keeps each line's rows (a claim on either finds them), and the
    same line's rows found twice are merged once."""
    rows = [dict(r, experiment="e", line="a") for r in plain_rows[:3]]
    twin = [dict(r, line="b") for r in rows]
    merged = collect.load([_run_dir(tmp_path / "a", rows), _run_dir(tmp_path / "b", twin),
                           _run_dir(tmp_path / "again", rows)])[0]
    assert sorted(r["line"] for r in merged) == ["a", "a", "a", "b", "b", "b"]


def test_rows_without_a_json_configuration_are_refused(tmp_path, plain_rows):
    rows = [dict(r, config="not json") for r in plain_rows[:2]]
    bad = _run_dir(tmp_path / "bad", rows)
    with pytest.raises(ValueError, match="results.csv is not a jaxnet results table"):
        collect.load([bad])
    unreadable = []
    assert collect.load([bad], unreadable) == ([], 0) and len(unreadable) == 1


def test_decorated_rows_keep_the_experiment_order_of_their_configuration():
    job = plain_job(LOADS)
    row = decorate(point(0.2, 1, 0.5), job, config_id(job, job["patterns"]["uniform"]), "uniform",
                   job["patterns"]["uniform"])
    assert list(collect.config_of(row)) == list(job)
