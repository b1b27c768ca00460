"""The koikoi command in-process, for tests: ``run_cli(argv, capsys) -> (exit code, stdout, stderr)``."""

from __future__ import annotations

from pipeline.cli import main


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own exits (usage errors, --help, --version)
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err
