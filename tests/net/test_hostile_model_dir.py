"""A hostile model directory allocates nothing (issue 47): config.json's sizes are checked against the limits and
against the weight file's size (the network built on the meta device first) before a network is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pipeline.lineup.loader import load_agent
from pipeline.net import modelio
from pipeline.net.model import KoiKoiNet, ModelConfig
from pipeline.net.modelio import load_model, save_model

SMALL = dict(width=16, ff=32, heads=2, layers=1, dropout=0.0)


class Allocated(AssertionError):
    pass


@pytest.fixture
def no_allocation(monkeypatch):
    """Building a network anywhere but on the meta device fails the test (it would have allocated)."""
    def guarded(cls):
        def build(config):
            if torch.get_default_device().type != "meta":
                raise Allocated(f"{cls.__name__} of width {config.width} built for real")
            return cls(config)
        return build

    monkeypatch.setattr(modelio, "KoiKoiNet", guarded(KoiKoiNet))


def hostile(tmp_path: Path, config: dict, weights: bytes | None = None) -> Path:
    """A tiny real model directory whose config.json is replaced by ``config`` (and model.pt by ``weights``)."""
    d = save_model(KoiKoiNet(ModelConfig(**SMALL)), tmp_path / "m", {"kind": "sl"})
    doc = json.loads((d / "config.json").read_text())
    doc["config"].update(config)
    (d / "config.json").write_text(json.dumps(doc))
    if weights is not None:
        (d / "model.pt").write_bytes(weights)
    return d


@pytest.mark.usefixtures("no_allocation")
def test_sizes_past_the_limits_are_refused_in_one_line(tmp_path):
    d = hostile(tmp_path, {"width": 65536, "ff": 2**20, "layers": 64, "heads": 4})
    with pytest.raises(ValueError, match=r"ModelConfig\.width must be <= 4096, got 65536") as e:
        load_model(d)
    assert "\n" not in str(e.value) and str(d / "config.json") in str(e.value)


@pytest.mark.usefixtures("no_allocation")
def test_a_config_larger_than_its_weights_is_refused_before_allocation(tmp_path):
    """Within the limits (a 6-billion-weight network, ~25 GB) but model.pt holds a few KB: refused from the shapes."""
    d = hostile(tmp_path, {"width": 4096, "ff": 16384, "layers": 32, "heads": 64})
    with pytest.raises(ValueError, match=r"describes [\d,]+ weights but .*model\.pt holds [\d,]+ bytes") as e:
        load_model(d)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="describes"):  # the way every agent is loaded, one line
        load_agent(str(d))


def test_an_honest_model_directory_still_loads(tmp_path):
    net = KoiKoiNet(ModelConfig(**SMALL))
    d = save_model(net, tmp_path / "ok", {"kind": "sl"})
    loaded, meta = load_model(d)
    assert meta["kind"] == "sl" and all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(),
                                                                           net.state_dict().values()))
