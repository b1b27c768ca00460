"""`make setup` prints only real errors: no setuptools deprecation (an SPDX license string, a setuptools that
reads it) and pip at its errors-only level (one -q still passes the build backend's warnings through)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.licenses import canonicalize_license_expression
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def test_license_is_an_spdx_string_and_setuptools_reads_it():
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    license_ = doc["project"]["license"]
    assert isinstance(license_, str) and canonicalize_license_expression(license_) == license_
    (setuptools,) = [Requirement(r) for r in doc["build-system"]["requires"] if r.startswith("setuptools")]
    assert not setuptools.specifier.contains("76.9") and setuptools.specifier.contains("77.0")


def test_make_setup_runs_pip_at_errors_only():
    makefile = (ROOT / "Makefile").read_text()
    torch = makefile.split("$(VENV)/.torch-%:", 1)[1].split("\n\n", 1)[0]
    project = makefile.split("$(STAMP): pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert torch.count("$(PIP_INSTALL)") == 2 and "pip install" not in torch  # pip, torch
    assert project.count("$(PIP_INSTALL)") == 1 and "pip install" not in project  # the project
    assert "$(if $(TORCH)," in torch  # only a build asked for by name prints what torch can do
    assert re.search(r"^PIP_INSTALL := \$\(BIN\)/pip install -qq ", makefile, re.M)
