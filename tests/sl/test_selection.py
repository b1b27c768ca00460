"""Counting interchangeable cards as one (the paper's SL accuracy) and per-network best epochs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from pipeline.engine.cards import CANONICAL, card_id
from pipeline.net.encoding import same_choice
from pipeline.net.model import KoiKoiNet, ModelConfig
from pipeline.sl.selection import PerDecisionBest


def test_interchangeable_cards_are_the_papers_equal_results():
    # the paper's sl_record_to_dataset.py lists these id groups (dross of a month) as equal results
    paper = [[2, 3], [6, 7], [10, 11], [14, 15], [18, 19], [22, 23], [26, 27], [30, 31], [34, 35], [38, 39],
             [45, 46, 47]]
    groups: dict[int, list[int]] = {}
    for c, k in enumerate(CANONICAL):
        groups.setdefault(k, []).append(c)
    assert sorted(g for g in groups.values() if len(g) > 1) == paper
    assert CANONICAL[card_id(9, 1)] == card_id(9, 1)  # the Sake Cup is dross too, but also a seed


def test_agreement_counts_a_twin_dross_as_the_same_choice():
    pine3, pine4, crane = card_id(1, 3), card_id(1, 4), card_id(1, 1)
    pred = np.array([pine4, crane, pine3, 49])
    action = np.array([pine3, pine3, pine3, 48])
    np.testing.assert_array_equal(same_choice(pred, action), [True, False, True, False])


def test_each_network_is_kept_at_its_own_best_epoch():
    net = KoiKoiNet(ModelConfig(width=8, ff=16, heads=2, layers=1))
    cb = PerDecisionBest(patience=2)
    losses = [(1.0, 1.0, 1.0), (0.9, 1.2, 1.1), (0.8, 1.3, 1.2), (0.85, 1.4, 1.3), (0.9, 1.5, 1.4)]
    for epoch, (d, p, k) in enumerate(losses):
        with torch.no_grad():
            for param in net.parameters():
                param.fill_(float(epoch))  # the weights tell the epoch they come from
        trainer = SimpleNamespace(sanity_checking=False, state=SimpleNamespace(fn="fit"), current_epoch=epoch,
                                  should_stop=False,
                                  callback_metrics={"val/loss_discard": torch.tensor(d),
                                                    "val/loss_pick": torch.tensor(p),
                                                    "val/loss_koikoi": torch.tensor(k)})
        cb.on_validation_end(trainer, SimpleNamespace(net=net))
        if trainer.should_stop:
            break
    assert epoch == 4  # two epochs without any network improving
    assert cb.best_epoch == {"discard": 3, "pick": 1, "koikoi": 1}
    restored = KoiKoiNet(net.config)
    restored.load_state_dict(net.state_dict())
    cb.restore(restored)
    assert all((p == 2.0).all() for p in restored.trunks[0].parameters())  # discard: epoch 3 (index 2)
    assert all((p == 0.0).all() for p in restored.trunks[1].parameters())
    assert all((p == 0.0).all() for p in restored.outs[2].parameters())
    # the state travels in a checkpoint
    again = PerDecisionBest(patience=2)
    again.load_state_dict(cb.state_dict())
    assert again.best_epoch == cb.best_epoch and again.waited == cb.waited


def test_selection_on_accuracy_keeps_the_most_accurate_epoch():
    net = KoiKoiNet(ModelConfig(width=8, ff=16, heads=2, layers=1))
    cb = PerDecisionBest(patience=5, monitor="acc")
    for epoch, acc in enumerate((0.5, 0.7, 0.6)):
        metrics = {f"val/acc_{n}": torch.tensor(acc) for n in ("discard", "pick", "koikoi")}
        trainer = SimpleNamespace(sanity_checking=False, state=SimpleNamespace(fn="fit"), current_epoch=epoch,
                                  should_stop=False, callback_metrics=metrics)
        cb.on_validation_end(trainer, SimpleNamespace(net=net))
    assert cb.best_epoch == {"discard": 2, "pick": 2, "koikoi": 2}


def test_weight_average_follows_the_trained_weights():
    from pipeline.sl.module import SLModule

    net = KoiKoiNet(ModelConfig(width=8, ff=16, heads=2, layers=1))
    module = SLModule(net, ema=0.9)
    before = [p.detach().clone() for p in module.ema_net.parameters()]
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)
    module.on_train_batch_end(None, None, 0)
    for b, avg, p in zip(before, module.ema_net.parameters(), net.parameters(), strict=True):
        assert torch.allclose(avg, b + 0.1 * (p - b)) and not avg.requires_grad
    assert module.eval_net is module.ema_net and SLModule(net).eval_net is net
