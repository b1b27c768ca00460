import gc
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from tiny import TINY

from pipeline.agents.base import Agent
from pipeline.agents.heuristic import HeuristicAgent
from pipeline.agents.random_agent import RandomAgent
from pipeline.cli import main
from pipeline.duel.runner import DuelResult, duel_games, duel_seeds, play_duel
from pipeline.engine import GameState, Observation


class Recorder(Agent):
    """Plays like ``inner`` and remembers (seat, full hand) of each round-1 first discard it made."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.dealt: set[tuple[int, int]] = set()

    def act(self, observations: Sequence[Observation]) -> list[int]:
        self.dealt.update((o.player, o.hand) for o in observations if o.round == 1 and o.hand.bit_count() == 8)
        return self.inner.act(observations)


def test_duplicate_deals_repeat_cards_with_seats_swapped():
    a, b = Recorder(HeuristicAgent(0)), Recorder(RandomAgent(1))
    games = list(duel_games(a, b, games=6, seed=40))
    first = sorted((s for seat, _, s in games if seat == 0), key=lambda s: s.results[0].deal)
    second = sorted((s for seat, _, s in games if seat == 1), key=lambda s: s.results[0].deal)
    assert len(first) == len(second) == 3
    assert [seat for seat, _, _ in games] == [0, 0, 0, 1, 1, 1]  # every deal with A seated 0, then seated 1
    assert sorted(deal for seat, deal, _ in games if seat == 0) == [40, 41, 42]
    for g0, g1 in zip(first, second):
        r0, r1 = g0.results[0], g1.results[0]
        assert r0.deal == r1.deal  # same hands, field and stock order
        assert r0.dealer == r1.dealer  # same seat deals first, so a different agent does
        hand0, hand1 = r0.deal[0], r0.deal[1]
        # A played hand 0 from seat 0 in the first game and hand 1 from seat 1 in the second; B the reverse
        assert {(0, hand0), (1, hand1)} <= a.dealt and {(1, hand1), (0, hand0)} <= b.dealt
    assert {seat for seat, _ in a.dealt} == {0, 1}
    assert len(a.dealt) == len(b.dealt) == 6  # each agent played both hands of each of the 3 deals
    assert list(duel_seeds(6, 40)) == [40, 41, 42]
    assert len({f.results[0].deal[0] for f in first}) == 3  # distinct deals across pairs
    with pytest.raises(ValueError, match="even"):
        duel_seeds(5, 0)


def test_seats_swap_between_the_two_seatings(monkeypatch):
    calls = []
    import pipeline.duel.runner as runner

    real = runner.stream_games

    def spy(agents, seeds, **kw):
        calls.append((agents, list(seeds)))
        return real(agents, seeds, **kw)

    monkeypatch.setattr(runner, "stream_games", spy)
    a, b = RandomAgent(0), RandomAgent(1)
    play_duel(a, b, games=4, seed=7)
    assert [c[0] for c in calls] == [(a, b), (b, a)]  # A first seat, then second seat
    assert calls[0][1] == calls[1][1] == [7, 8]  # one stream per seating over all deals


def test_duel_counts_from_a_side():
    a, b = HeuristicAgent(0), RandomAgent(1)
    r = DuelResult()
    games = list(duel_games(a, b, games=10, seed=0))
    for seat, deal, state in games:
        r.add(state, seat, 30, deal)
    assert r.games == 10 and r.wins + r.losses + r.draws == 10 and sum(r.pairs) == 5
    assert r.points == sum(s.points[seat] - 30 for seat, _, s in games)
    assert r.win_rate == pytest.approx((r.wins + 0.5 * r.draws) / 10)
    lo, hi = r.ci95
    assert lo <= r.win_rate <= hi
    # swapping the roles mirrors the result
    back = DuelResult()
    for seat, deal, state in games:
        back.add(state, 1 - seat, 30, deal)
    assert back.pairs == r.pairs[::-1]
    assert back.wins == r.losses and back.point_diff == pytest.approx(-r.point_diff)
    # the same duel played again in one call: the same totals
    again = play_duel(HeuristicAgent(0), RandomAgent(1), games=10, seed=0)
    assert again.summary() == r.summary()


class Census(Agent):
    """A random agent that counts the game states alive (in memory) now and then, and its batch sizes."""

    def __init__(self, inner: Agent | None = None) -> None:
        self.inner, self.calls, self.most_alive, self.largest_batch = inner or RandomAgent(0), 0, 0, 0
        self.before = self.alive()  # held by earlier tests of this process (caches, fixtures): not the duel's

    @staticmethod
    def alive() -> int:
        return sum(1 for o in gc.get_objects() if type(o) is GameState)

    def act(self, observations: Sequence[Observation]) -> list[int]:
        self.calls += 1
        self.largest_batch = max(self.largest_batch, len(observations))
        if self.calls % 25 == 1:
            self.most_alive = max(self.most_alive, self.alive() - self.before)
        return self.inner.act(observations)


def test_a_duel_keeps_at_most_its_concurrency_of_games_in_memory():
    gc.collect()  # what earlier tests of this process left in reference cycles is not the duel's
    census = Census()
    r = play_duel(census, RandomAgent(1), games=200, seed=0, concurrency=16)
    assert r.games == 200 and r.wins + r.losses + r.draws == 200
    assert census.calls > 25 and census.largest_batch <= 16
    assert 0 < census.most_alive <= 16 + 1  # + the game last counted; not the 100 deals of a seating
    with pytest.raises(ValueError, match="concurrency"):
        play_duel(census, RandomAgent(1), games=2, concurrency=0)


def test_duel_command_prints_json(capsys):
    assert main(["duel", "heuristic", "random", "--games", "5", "--seed", "3"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out.strip().splitlines()[-1])
    assert out["games"] == 6 and "playing 6 games, not 5" in cap.err
    assert set(out) >= {"games", "win_rate", "draw_rate", "point_diff", "ci95", "wins", "losses", "draws",
                        "seconds", "games_per_s"}
    assert out["wins"] + out["losses"] + out["draws"] == 6


@pytest.mark.parametrize("spec", ["foo", "models/does-not-exist"])
def test_duel_command_bad_spec(spec, capsys):
    assert main(["duel", "heuristic", spec, "--games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("koikoi duel: error:") and spec in err


def test_ctrl_c_stops_a_long_duel_with_one_line_and_exit_130(tmp_path):
    koikoi = Path(sys.executable).with_name("koikoi")
    # a terminal's Ctrl-C: SIGINT at its default, even where the suite itself was started in the background
    # (`make test &`), whose processes inherit SIGINT ignored and so would never see it
    proc = subprocess.Popen([str(koikoi), "duel", "random", "random", "--games", "1000000"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60  # wait until it plays: its own threads, past the imports
        while time.monotonic() < deadline and proc.poll() is None and _cpu_seconds(proc.pid) < 1.0:
            time.sleep(0.2)
        cpu = _cpu_seconds(proc.pid) if proc.poll() is None else None
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # say what it was doing, not just that it timed out
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"still running 60 s after SIGINT (sent at {cpu} CPU seconds); stderr: {err[-800:]!r}")
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert err.strip() == "koikoi duel: interrupted" and out == ""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_model_duel_on_the_selfplay_engine_equals_the_arena_duel():
    """Two networks on the batched self-play engine: the same deals, seats and scores as ``play_duel``."""
    import torch

    from pipeline.agents.model_agent import ModelAgent
    from pipeline.duel.runner import play_duel, play_model_duel
    from pipeline.net.model import KoiKoiNet

    nets = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        nets.append(KoiKoiNet(TINY).eval())
    # fp32 on both paths: ``auto`` is bf16 on AMX and AVX512-BF16 CPUs
    arena = play_duel(ModelAgent(nets[0], inference="fp32"), ModelAgent(nets[1], inference="fp32"), 8, seed=5,
                      num_rounds=3)
    from pipeline.selfplay.policies import NetSpec

    specs = [NetSpec.from_net(net, name) for net, name in zip(nets, "AB")]
    engine = play_model_duel(*specs, 8, seed=5, num_rounds=3, workers=0, inference="fp32")
    assert (engine.wins, engine.losses, engine.draws, engine.points) == (
        arena.wins, arena.losses, arena.draws, arena.points)


@pytest.mark.parametrize("builtin", ["heuristic", "random"])
def test_a_network_against_a_builtin_agent_plays_the_same_games_on_the_workers(builtin):
    """A built-in agent ships to the workers as a ``RuleSpec``; it draws from its seed and the observation only, so
    the self-play engine (other batches, another process) plays exactly the in-process duel's games."""
    import torch

    from pipeline.agents.model_agent import ModelAgent
    from pipeline.agents.rule_player import RULES, RuleSpec
    from pipeline.duel.runner import on_workers, play_model_duel, player_spec
    from pipeline.net.model import KoiKoiNet

    torch.manual_seed(0)
    net = KoiKoiNet(TINY).eval()
    agent = ModelAgent(net, inference="fp32")
    rule = RULES[builtin](7)
    specs = [player_spec(agent, "A"), player_spec(rule, "B")]
    assert specs[1] == RuleSpec(builtin, 7) and on_workers(specs, 2)
    assert not on_workers([specs[1], specs[1]], 2) and not on_workers(specs, 0)  # two built-ins: in this process
    arena = play_duel(agent, rule, 12, seed=5, num_rounds=3, concurrency=5)
    engine = play_model_duel(*specs, 12, seed=5, num_rounds=3, workers=0, inference="fp32")
    assert (engine.wins, engine.losses, engine.draws, engine.points) == (
        arena.wins, arena.losses, arena.draws, arena.points)


def test_the_builtin_agents_draw_from_their_seed_and_the_observation_only():
    """The same observation gets the same action alone or in a batch; another seed draws otherwise somewhere."""
    from pipeline.agents.rule_player import RULES

    obs = []
    for seed in range(6):
        s = GameState(seed=seed)
        obs.append(s.observation(s.player))
    for cls in RULES.values():
        agent = cls(3)
        assert agent.act(obs) == [a for o in obs for a in cls(3).act([o])] == agent.act(obs[::-1])[::-1]
    assert RandomAgent(3).act(obs) != RandomAgent(4).act(obs)


def test_an_rl_evaluation_scores_like_the_duel_of_the_same_deals():
    """One win-rate function: ``rl.evaluation.evaluate`` (self-play engine) counts with ``DuelResult`` as a duel."""
    import torch

    from pipeline.agents.model_agent import ModelAgent
    from pipeline.duel.runner import play_duel
    from pipeline.duel.stats import DuelResult
    from pipeline.net.inference import FP32
    from pipeline.net.model import KoiKoiNet
    from pipeline.rl.evaluation import curve_row, evaluate
    from pipeline.selfplay.executor import InlineExecutor
    from pipeline.selfplay.policies import NetSpec

    nets = []
    for seed in (2, 3):
        torch.manual_seed(seed)
        nets.append(KoiKoiNet(TINY).eval())
    a, b = (NetSpec.from_net(n, str(i)) for i, n in enumerate(nets))
    ev = evaluate(InlineExecutor(), a, b, 8, 5, inference=FP32, concurrency=8, progress=False)
    duel = play_duel(ModelAgent(nets[0], inference=FP32), ModelAgent(nets[1], inference=FP32), 8, seed=5).summary()
    assert isinstance(ev.result, DuelResult) and ev.result.summary() == duel
    assert curve_row(ev) == {"win_rate": duel["win_rate"], "point_diff": duel["point_diff"], "eval_games": 8,
                             "ci_low": duel["ci95"][0], "ci_high": duel["ci95"][1]}


def test_a_model_duels_forward_passes_stay_bounded_whatever_its_games(tmp_path, capsys):
    """What kept a model duel's memory growing with its games (up to 1,024 games): 512 games at once made
    512-observation forward passes. The agent is still asked for all of them at once, the net sees at most
    CPU_FORWARD_BATCH."""
    import torch

    from pipeline.agents.model_agent import CPU_FORWARD_BATCH, ModelAgent
    from pipeline.net.model import KoiKoiNet
    from pipeline.net.modelio import save_model

    net = KoiKoiNet(TINY).eval()
    passes: list[int] = []
    net.register_forward_pre_hook(lambda _, args: passes.append(args[0].shape[0]))
    census = Census(ModelAgent(net))
    for i, _ in enumerate(duel_games(census, RandomAgent(1), games=600, seed=0)):  # 300 deals, all at once
        if i == 10:
            break
    assert census.largest_batch > 4 * CPU_FORWARD_BATCH and max(passes) == CPU_FORWARD_BATCH

    model = save_model(net, tmp_path / "tiny", {"kind": "sl"})  # the bench command plays a model too
    threads = torch.get_num_threads()
    assert main(["bench", "duel", "--a", str(model), "--games", "4"]) == 0
    torch.set_num_threads(threads)  # the command set one thread
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["games"] == 4 and out["a"] == str(model) and out["peak_rss_mb"] >= out["peak_rss_mb_before_play"] > 0


def test_a_sequential_duel_looks_after_every_block_and_counts_none_past_its_decision():
    from pipeline.duel.runner import play_blocks
    from pipeline.duel.sprt import Sprt

    jobs = []

    def play(job: range, size: int):  # A wins both games of the even deals and of all from 24, loses the others
        jobs.append((job.start, job.stop))
        parts = []
        for i in range(job.start, job.stop, size):
            part = DuelResult()
            for deal in range(i, min(i + size, job.stop)):
                for seat in (0, 1):
                    part.add_outcome(seat if deal >= 24 or deal % 2 == 0 else 1 - seat, seat, 30, 30, deal)
            parts.append(part)
        return parts, {"0.searched": float(len(job))}

    result, stats = play_blocks(range(0, 400), 8, play, sprt=Sprt(0.5, 0.55), most=4)
    # jobs of 1, 1, 1, 1, 2, 3 blocks (half those done, at most 4); the LLR crosses 2.944 after deal 63, in the
    # middle of the last job: its last block (deals 64..71) was played but is not counted
    assert jobs == [(0, 8), (8, 16), (16, 24), (24, 32), (32, 48), (48, 72)]
    assert result.games == 2 * 64 and result.pairs == [12, 0, 0, 0, 52] and result.sprt["decision"] == "H1"
    assert stats == {"0.searched": 72.0}  # the job's work, played past the decision, is counted as work
    fixed, _ = play_blocks(range(0, 24), 8, play)  # no test: every block, one job each
    assert fixed.games == 48 and fixed.sprt is None and jobs[-3:] == [(0, 8), (8, 16), (16, 24)]


def test_the_command_stops_a_clear_duel_within_its_first_looks(capsys):
    assert main(["duel", "heuristic", "random", "--games", "400", "--rounds", "1", "--sprt", "0.5", "0.55"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # within its first four looks of 32 games (96 on these deals), of the 12 that 400 games allow
    assert out["games"] <= 128 and out["sprt"]["decision"] == "H1" and out["sprt"]["llr"] >= out["sprt"]["upper"]
    assert set(out["sprt"]) == {"h0", "h1", "alpha", "beta", "llr", "lower", "upper", "decision"}
    assert sum(out["pairs"]) == out["games"] // 2 and out["ci95"][0] <= out["win_rate"] <= out["ci95"][1]
    assert main(["duel", "heuristic", "random", "--sprt", "0.55", "0.5"]) == 2
    assert "--sprt: SPRT bounds must be 0 < H0 < H1 < 1" in capsys.readouterr().err
