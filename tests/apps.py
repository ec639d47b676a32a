"""Running the Hydra apps in-process, as the console scripts do (each case well under a
second, where a subprocess pays for importing JAX every time)."""
import contextlib
import io
import sys


def run_app(app, tmp_path, *overrides):
    """(exit code, stderr) of a Hydra app run in-process with these overrides."""
    err = io.StringIO()
    argv = sys.argv
    flags = [o for o in overrides if o.startswith("-")]  # -m etc. before the overrides, as Hydra parses them
    sys.argv = ["jaxnet", *flags, f"hydra.run.dir={tmp_path}", *[o for o in overrides if o not in flags]]
    try:
        with contextlib.redirect_stderr(err):
            app.main()
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    finally:
        sys.argv = argv
    return code, err.getvalue()


def assert_one_line(stderr: str, *expected: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    for text in expected:
        assert text in lines[0], lines[0]
