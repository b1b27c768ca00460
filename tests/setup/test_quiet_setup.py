"""`make setup` prints only real errors: no setuptools deprecation (an SPDX license string, a setuptools that
reads it), pip at its errors-only level (one -q still passes the build backend's warnings through) and uv quiet."""

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
    # pip, then torch: from pip's own sources alone where it has some, else from PyTorch's index for its build
    assert torch.count("$(PIP_INSTALL)") == 3 and "pip install" not in torch
    # the project by pip where pip has sources of its own (uv reads none of them), else uv by pip and the project
    # by uv, quiet: no other installer line
    assert project.count("$(PIP_INSTALL)") == 2 and project.count("$(BIN)/uv pip install -q ") == 1
    assert project.count("pip install") == 1
    assert "$(TORCH_CHECK)" in torch  # one line: the build it put in
    assert re.search(r"^PIP_INSTALL := \$\(BIN\)/pip install -qq ", makefile, re.M)


def test_the_build_follows_the_gpu_seen_and_torch_overrides_it(tmp_path):
    """Issue 69: a new .venv on a machine without an NVIDIA GPU gets the CPU build (never PyPI's torch, which is
    the CUDA one); with one, PyPI's CUDA build; TORCH= overrides both (make -n: nothing runs)."""
    import shutil
    import subprocess

    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()

    def dry(gpu: bool, *args: str) -> str:
        smi = bin_dir / "nvidia-smi"
        smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H100 (UUID: x)'\n" if gpu else "#!/bin/sh\nexit 9\n")
        smi.chmod(0o755)
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
        return subprocess.run(["make", "-n", "setup", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, check=True).stdout

    cpu = dry(False)
    assert "'torch==2.13.0+cpu' ||" in cpu
    assert "torch==2.13.0+cpu --extra-index-url https://download.pytorch.org/whl/cpu" in cpu
    assert "torch===2.13.0" not in cpu and "torch==2.13.0 " not in cpu
    assert "torch===2.13.0" in dry(True) and "+cpu" not in dry(True)
    assert "torch===2.13.0" in dry(False, "TORCH=cuda") and "+cu126" in dry(False, "TORCH=cu126")
    assert "+cpu" in dry(True, "TORCH=cpu")
