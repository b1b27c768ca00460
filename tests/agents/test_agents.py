import pytest

from pipeline.agents.heuristic import HeuristicAgent, potential, threat
from pipeline.agents.random_agent import RandomAgent
from pipeline.duel.runner import play_duel
from pipeline.engine import DISCARD, KOIKOI_DECISION, PICK, STOP, GameState, Observation, card_id
from pipeline.engine.cards import LIGHT
from pipeline.lineup.loader import load_agent


def _obs(**kw) -> Observation:
    base = dict(player=0, to_act=True, decision=DISCARD, legal_mask=0, hand=0, field=0, my_pile=0, opp_pile=0,
                opp_hand_count=6, stock_count=18, round=1, num_rounds=8, turn=5, is_dealer=True, my_points=30,
                opp_points=30, my_koikoi=0, opp_koikoi=0, my_yaku_points=0, opp_yaku_points=0, pick_card=-1,
                pick_from_draw=False, turns=())
    base.update(kw)
    if not kw.get("legal_mask"):
        base["legal_mask"] = base["hand"]
    return Observation(**base)


def bits(*cards: tuple[int, int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << card_id(*c)
    return m


def test_heuristic_takes_the_light_and_completes_yaku():
    # Pine 3 captures the Crane; Plum 3 would capture only Plum 4 (dross).
    obs = _obs(hand=bits((1, 3), (2, 3)), field=bits((1, 1), (2, 4)))
    assert HeuristicAgent(0).act([obs]) == [card_id(1, 3)]
    # with Boar and Deer in my pile, the Butterfly beats a ribbon
    obs = _obs(hand=bits((6, 3), (4, 3)), field=bits((6, 1), (4, 2)), my_pile=bits((7, 1), (10, 1)))
    assert HeuristicAgent(0).act([obs]) == [card_id(6, 3)]
    # a pick between a light and dross takes the light
    obs = _obs(decision=PICK, pick_card=card_id(3, 3), legal_mask=bits((3, 1), (3, 4)), hand=bits((5, 3)),
               field=bits((3, 1), (3, 4)))
    assert HeuristicAgent(0).act([obs]) == [card_id(3, 1)]


def test_heuristic_denies_and_discards_safely():
    # nothing to capture: lay down the card whose month is dead (others all taken), not the light
    obs = _obs(hand=bits((12, 1), (5, 4)), field=bits((9, 3)),
               my_pile=bits((5, 1), (5, 2), (5, 3)))
    assert HeuristicAgent(0).act([obs]) == [card_id(5, 4)]
    # with the Boar in my pile the Deer beats Cherry Poetry, unless the opponent holds two red ribbons
    hand, field = bits((3, 3), (10, 3)), bits((3, 2), (10, 1))
    boar = bits((7, 1))
    assert HeuristicAgent(0).act([_obs(hand=hand, field=field, my_pile=boar)]) == [card_id(10, 3)]
    obs = _obs(hand=hand, field=field, my_pile=boar, opp_pile=bits((1, 2), (2, 2)))
    assert HeuristicAgent(0).act([obs]) == [card_id(3, 3)]
    assert threat(bits((1, 2), (2, 2)), 0) == 5.0
    assert potential(LIGHT & ~(1 << card_id(11, 1)), 0) > potential(bits((1, 1)), 0)


def test_heuristic_koikoi_rules():
    agent = HeuristicAgent(0)
    kd = dict(decision=KOIKOI_DECISION, legal_mask=(1 << 48) | (1 << 49), hand=bits((4, 3), (5, 3), (6, 3), (7, 3),
                                                                                      (8, 3), (9, 3)))
    early = _obs(**kd, my_pile=bits((1, 2), (2, 2), (4, 2), (5, 2), (7, 2), (1, 1), (3, 1)), my_yaku_points=1)
    assert agent.act([early]) == [49]  # weak opponent, early, near another yaku: koi-koi
    assert agent.act([_obs(**{**kd, "hand": bits((4, 3))}, my_yaku_points=1)]) == [STOP]  # late in the round
    assert agent.act([_obs(**kd, opp_yaku_points=2)]) == [STOP]  # the opponent threatens
    assert agent.act([_obs(**kd, my_yaku_points=5, opp_points=4)]) == [STOP]  # stopping wins the game


def test_heuristic_beats_random_clearly():
    # no time limit here: a timed test fails on a busy machine (the guide: measure speed with koikoi bench)
    r = play_duel(HeuristicAgent(1), RandomAgent(2), games=60, seed=0)
    assert r.win_rate >= 0.8, r.summary()
    assert r.point_diff > 5


def test_heuristic_is_legal_and_seeded():
    s = GameState(seed=3)
    a = HeuristicAgent(0)
    while not s.is_over:
        obs = s.observation(s.player)
        act = a.act([obs])[0]
        assert obs.legal_mask >> act & 1
        s.step(act)


def test_load_agent_specs(tmp_path):
    assert isinstance(load_agent("random", 1), RandomAgent)
    assert isinstance(load_agent("heuristic", 1), HeuristicAgent)
    with pytest.raises(ValueError, match=r"^unknown agent 'foo': use random, heuristic or a model directory"):
        load_agent("foo")
    with pytest.raises(ValueError, match="no such model directory"):
        load_agent(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match=f"directory {tmp_path} holds no saved model"):
        load_agent(str(tmp_path))


@pytest.mark.parametrize("query", ["", "search:"])
def test_a_model_agent_reads_its_weights_once_and_holds_one_network(tiny_model, monkeypatch, query):
    """Loading a model agent (or a searcher over it) reads ``model.pt`` once, and the agent plays the network it
    read: no second copy built from the spec's bytes."""
    import torch

    from pipeline.play.opponents import networks

    real, loads = torch.load, []
    monkeypatch.setattr(torch, "load", lambda *a, **kw: loads.append(a[0]) or real(*a, **kw))
    agent = load_agent(f"{query}{tiny_model}" + ("?reward=point" if query else ""), seed=1, inference="fp32")
    assert len(loads) == 1 and networks(agent) == 1
    assert agent.player.model.net is agent.net if query else agent.player.net is agent.net
