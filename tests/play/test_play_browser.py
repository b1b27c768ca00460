"""A real browser plays one whole game by clicking and pressing keys, reopens a game by its address and after
a reload, previews what a hand card takes, and opens a game's analysis: Debian's Chromium driven by Selenium.

Skipped with a one-line reason where Chromium or its driver is missing (``make system-packages`` installs them).
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from pipeline.engine import replay_dir
from pipeline.play.app import create_app
from pipeline.play.games import Games

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()),
                       reason="no chromium and chromedriver (Debian chromium, chromium-driver: make system-packages)"),
]


@pytest.fixture
def server(tmp_path, tiny_model):
    """uvicorn serving the app on a free loopback port, in a thread; yields (base url, games)."""
    yield from serve(Games(tmp_path / "played", tiny_model))


def serve(games: Games):
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(games), host="127.0.0.1", port=port,
                                        log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", games
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed (pip install -e '.[dev]')")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(arg)  # no sandbox: CI runs as root
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def wait_for(driver, condition, what: str, timeout: float = 30):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d), message=what)


def start_game(d, base: str, seed: str, opponent: str | None = None):
    """Open the page, start a 2-round game; the page's dialog and readiness checks."""
    from selenium.webdriver.common.by import By

    d.get(f"{base}/?delay=0")
    wait_for(d, lambda d: d.find_element(By.ID, "new-game-dialog").get_attribute("open") is not None, "new game")
    d.find_element(By.ID, "rounds-input").clear()
    d.find_element(By.ID, "rounds-input").send_keys("2")
    if opponent:
        d.find_element(By.ID, "opponent-select").send_keys(opponent)
    d.find_element(By.ID, "seed-input").send_keys(seed)
    d.find_element(By.ID, "start-button").click()

    def is_open(dialog: str) -> bool:
        return d.find_element(By.ID, dialog).get_attribute("open") is not None

    def ready(d) -> bool:
        return d.find_element(By.TAG_NAME, "body").get_attribute("data-busy") == "false" or is_open("round-dialog")

    return is_open, ready


def test_a_person_plays_a_whole_game(server, browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, games = server
    d = browser
    is_open, ready = start_game(d, base, "4")

    moves = by_key = rounds_seen = 0
    hint_checked = False
    for _ in range(200):
        wait_for(d, ready, "the page to wait for the player")
        if is_open("over-dialog"):
            break
        if is_open("round-dialog"):
            rounds_seen += 1
            # the header shows the points the round's dialog reports
            totals = re.search(r"Points: you (-?\d+), .* (-?\d+)\.", d.find_element(By.ID, "round-body").text)
            header = [d.find_element(By.ID, f"points-{side}").text for side in ("you", "opponent")]
            assert totals and header == [totals[1], totals[2]], (header, totals)
            d.find_element(By.ID, "round-continue").click()
            continue
        if is_open("koikoi-dialog"):
            ActionChains(d).send_keys("s").perform()  # stop, by keyboard
            wait_for(d, lambda d: not is_open("koikoi-dialog"), "the koi-koi prompt to close")
            moves += 1
            continue
        legal = d.find_elements(By.CSS_SELECTOR, "#hand button.legal, #field button.legal")
        assert legal, d.find_element(By.ID, "prompt").text
        if not hint_checked:  # the opponent's view of my options, one badge per legal card
            d.find_element(By.ID, "hint-toggle").click()
            wait_for(d, lambda d, n=len(legal): len(d.find_elements(By.CSS_SELECTOR, ".legal .hint-badge")) == n,
                     "hints")
            hint_checked = True
        before = d.execute_script("return game.state.move")
        if moves % 3 == 1:  # keys go to the focused element, as a person's would
            ActionChains(d).send_keys("1").perform()
            by_key += 1
        elif moves % 3 == 2:
            ActionChains(d).send_keys(Keys.ARROW_RIGHT, Keys.ENTER).perform()
            by_key += 1
        else:
            legal[-1].click()
        moves += 1
        wait_for(d, lambda d, before=before: d.execute_script("return game.state.move") != before
                 or is_open("round-dialog") or is_open("koikoi-dialog"), "the move to take effect")
    else:
        pytest.fail("the game did not end within 200 page actions")

    title = d.find_element(By.ID, "over-title").text
    assert title.split()[0] in ("You", "Draw"), title
    assert rounds_seen >= 1 and moves >= 8 and by_key >= 4
    assert len(d.find_elements(By.CSS_SELECTOR, "#over-rounds tr")) >= 2
    game = games.get(d.execute_script("return game.id"))
    assert game.state.is_over and game.seed == 4
    assert replay_dir(games.records_dir).summary()["mismatches"] == 0
    d.save_screenshot(str(tmp_path / "game_over.png"))

    ActionChains(d).send_keys("r").perform()  # the review, by keyboard
    wait_for(d, lambda d: is_open("review-dialog"), "the review")
    items = d.find_elements(By.CSS_SELECTOR, "#review-list li")
    assert len(items) == len(game.agent_decisions)
    assert len(d.find_elements(By.CSS_SELECTOR, "#review-list .option.chosen")) == len(items)
    d.save_screenshot(str(tmp_path / "review.png"))
    d.find_element(By.ID, "review-close").send_keys(Keys.ENTER)

    ActionChains(d).send_keys("y").perform()  # the person's record: this game, and the win rate against the model
    wait_for(d, lambda d: is_open("record-dialog"), "the record")
    rows = d.find_elements(By.CSS_SELECTOR, "#record-games tr")
    assert len(rows) == 1 and "tiny" in rows[0].text
    assert f"{game.state.points[0]} : {game.state.points[1]}" in rows[0].text
    vs = d.find_elements(By.CSS_SELECTOR, "#record-opponents tr")
    assert len(vs) == 1 and vs[0].text.startswith("tiny 1 ") and "%" in vs[0].text
    assert len(d.find_elements(By.CSS_SELECTOR, "#record-opponents .ci-bar .ci-dot")) == 1
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    assert (tmp_path / "game_over.png").stat().st_size > 10_000


def post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_a_game_opened_by_its_address_survives_a_reload_and_previews_what_a_card_takes(server, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    base, games = server
    d = browser
    created = post(f"{base}/api/games", {"seed": 3, "rounds": 2})  # through the API, not the page
    gid, state = created["id"], created["state"]
    assert state["decision"] == "discard"

    def ready(d) -> bool:
        return d.find_element(By.TAG_NAME, "body").get_attribute("data-busy") == "false"

    def shown(where: str) -> list[str]:
        return [c.get_attribute("data-card") for c in d.find_elements(By.CSS_SELECTOR, f"#{where} .card")]

    d.get(f"{base}/?game={gid}&delay=0")
    wait_for(d, lambda d: ready(d) and d.execute_script("return game && game.id") == gid, "the game by its address")
    assert shown("hand") == [f"{m},{i}" for m, i in state["hand"]]
    assert shown("field") == [f"{m},{i}" for m, i in state["field"]]
    assert d.find_element(By.ID, "new-game-dialog").get_attribute("open") is None
    assert d.find_element(By.ID, "opponent-name").text == "tiny"  # a name, not the model's path

    # hovering a hand card rings the field cards of its month, and says what it takes
    field = [tuple(c) for c in state["field"]]
    takes = 0
    for hand_card in d.find_elements(By.CSS_SELECTOR, "#hand .card"):
        month = int(hand_card.get_attribute("data-month"))
        ActionChains(d).move_to_element(hand_card).perform()
        expected = sorted(f"{m},{i}" for m, i in field if m == month)
        wait_for(d, lambda d, e=expected: sorted(c.get_attribute("data-card") for c in
                                               d.find_elements(By.CSS_SELECTOR, "#field .card.would-take")) == e,
                 f"the preview of month {month}")
        text = d.find_element(By.ID, "preview").text
        assert ("no match" in text) == (not expected) and ("you choose" in text) == (len(expected) == 2), text
        takes += bool(expected)
    assert takes >= 1

    # every label fits its card, and the 48 drawings are 48 different pictures
    assert not d.execute_script(
        "return [...document.querySelectorAll('.card-label')].filter("
        "(l) => l.getBoundingClientRect().width > l.parentElement.getBoundingClientRect().width + 12)"
        ".map((l) => l.textContent)")
    assert d.execute_script("return new Set([...Array(48).keys()].map((i) => "
                            "Hanafuda.svg((i >> 2) + 1, (i & 3) + 1).replace(/hf-clip-\\d+-\\d+/g, ''))).size") == 48

    # play one card, then reload: the same game, at the same move, with the same hand
    d.find_element(By.CSS_SELECTOR, "#hand button.legal").click()
    wait_for(d, lambda d: ready(d) and d.execute_script("return game.state.move") > 0, "the move")
    move, hand = d.execute_script("return game.state.move"), shown("hand")
    assert f"game={gid}" in d.current_url
    d.refresh()
    wait_for(d, lambda d: ready(d) and d.execute_script("return game && game.state.move") == move, "the reloaded game")
    assert d.execute_script("return game.id") == gid and shown("hand") == hand
    assert games.get(gid).move == move

    d.get(f"{base}/?game=nosuchgame&delay=0")  # a game the server does not hold: said, and a new game offered
    wait_for(d, lambda d: d.find_element(By.ID, "new-game-dialog").get_attribute("open") is not None, "new game")
    assert "no game 'nosuchgame'" in d.find_element(By.ID, "error").text
    assert "game=" not in d.current_url
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE" and "404" not in e["message"]]
    assert not errors, errors


def test_a_rounds_end_is_drawn_before_its_dialog(server, browser):
    """When a round's dialog opens, the board shows every capture of the round (the last one too, the opponent's
    or the person's), the scores the dialog reports and no prompt to play; the rules page is a link away."""
    from selenium.webdriver.common.by import By

    from pipeline.engine import card_tuple, ids_of
    from pipeline.play.view import pile_of

    base, games = server
    d = browser
    gid = post(f"{base}/api/games", {"seed": 5, "rounds": 2})["id"]
    d.get(f"{base}/?game={gid}&delay=0")
    game = games.get(gid)

    def is_open(dialog: str) -> bool:
        return d.find_element(By.ID, dialog).get_attribute("open") is not None

    def ready(d) -> bool:
        return (d.find_element(By.TAG_NAME, "body").get_attribute("data-busy") == "false"
                and d.execute_script("return game && game.id") == gid) or is_open("round-dialog")

    def shown(where: str) -> list[str]:
        return sorted(c.get_attribute("data-card") for c in d.find_elements(By.CSS_SELECTOR, f"#{where} .card"))

    rounds_checked = 0
    for _ in range(300):
        wait_for(d, ready, "the page to wait for the player")
        if is_open("over-dialog"):
            break
        if is_open("round-dialog"):
            number = int(re.search(r"Round (\d+) over", d.find_element(By.ID, "round-title").text)[1])
            res = game.state.results[number - 1]
            for side, player in (("opponent", game.you ^ 1), ("you", game.you)):
                pile = sorted(",".join(map(str, card_tuple(c))) for c in ids_of(pile_of(res.turns, player)))
                assert shown(f"pile-{side}") == pile, (number, side)
            prompt = d.find_element(By.ID, "prompt").text
            assert prompt == f"Round {number} over.", prompt  # not "Your turn"
            assert not d.find_elements(By.CSS_SELECTOR, "#hand button.legal, #field button.legal")
            header = [int(d.find_element(By.ID, f"points-{s}").text) for s in ("you", "opponent")]
            assert header == [res.totals[game.you], res.totals[game.you ^ 1]]
            rounds_checked += 1
            d.find_element(By.ID, "round-continue").click()
            wait_for(d, lambda d: not is_open("round-dialog"), "the round dialog to close")
            continue
        if is_open("koikoi-dialog"):
            d.find_element(By.ID, "stop-button").click()
            continue
        before = d.execute_script("return game.state.move")
        d.find_elements(By.CSS_SELECTOR, "#hand button.legal, #field button.legal")[0].click()
        wait_for(d, lambda d, before=before: d.execute_script("return game.state.move") != before
                 or is_open("round-dialog") or is_open("koikoi-dialog") or is_open("over-dialog"), "the move")
    else:
        pytest.fail("the game did not end within 300 page actions")
    assert rounds_checked >= 1
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors

    d.find_element(By.ID, "over-new-game").click()  # close the dialogs; the rules page is linked from the game
    rules = d.find_element(By.ID, "rules-link")
    assert rules.get_attribute("href").endswith("/static/rules.html")
    d.get(rules.get_attribute("href"))
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#yaku tr[data-yaku]"), "the rules page")
    text = d.find_element(By.TAG_NAME, "body").text
    assert "Moon Viewing Sake" in text and "Koi-koi bonus" in text


def test_the_analysis_after_a_game_marks_a_blunder_and_shows_its_board(tmp_path, browser):
    """A two-round game against the heuristic, the person playing their highest card and calling koi-koi whenever
    asked: the analysis shows its progress, then the graph with both rounds marked and a point for each judged
    move, and the koi-koi the judge flags (stopping won the round); a click shows the board of that decision, the
    move played beside the best one. The judge's playouts are the heuristic's, so what it flags does not hang on a
    model's floats."""
    from selenium.webdriver.common.by import By

    from pipeline.agents.heuristic import HeuristicAgent
    from pipeline.agents.rule_player import RulePlayer
    from pipeline.analysis.judge import Judge
    from pipeline.value.winprob import WinProbTable

    games = Games(tmp_path / "played", "heuristic", judge="heuristic playouts")
    games.judges.judge = Judge(RulePlayer(HeuristicAgent(0)), WinProbTable(8, 30, [[0.0, 4.0, 0.2]] * 8), 8)
    service = serve(games)
    base, _ = next(service)
    d = browser
    is_open, ready = start_game(d, base, "5", opponent="heuristic")

    for _ in range(100):
        wait_for(d, ready, "the page to wait for the player")
        if is_open("over-dialog"):
            break
        if is_open("round-dialog"):
            d.find_element(By.ID, "round-continue").click()
            wait_for(d, lambda d: not is_open("round-dialog"), "the round dialog to close")
        elif is_open("koikoi-dialog"):
            d.find_element(By.ID, "koikoi-button").click()
            wait_for(d, lambda d: not is_open("koikoi-dialog"), "the koi-koi prompt to close")
        else:
            before = d.execute_script("return game.state.move")
            d.find_elements(By.CSS_SELECTOR, "#hand button.legal, #field button.legal")[-1].click()
            wait_for(d, lambda d, before=before: d.execute_script("return game.state.move") != before
                     or is_open("round-dialog") or is_open("koikoi-dialog") or is_open("over-dialog"), "the move")
    else:
        pytest.fail("the game did not end within 100 page actions")
    gid = d.execute_script("return game.id")

    d.find_element(By.ID, "analysis-button").click()
    wait_for(d, lambda d: is_open("analysis-dialog"), "the analysis dialog")
    assert d.find_element(By.ID, "analysis-status").text.startswith(("Judging your moves", "Your accuracy"))
    wait_for(d, lambda d: d.find_element(By.ID, "analysis-result").is_displayed(), "the analysis", timeout=60)
    with urllib.request.urlopen(f"{base}/api/games/{gid}/analysis", timeout=30) as r:
        report = json.loads(r.read())
    flagged = [x for x in report["decisions"] if x["label"]]
    assert [x["decision"] for x in flagged] == ["koikoi"] and flagged[0]["label"] == "blunder"
    assert d.find_element(By.ID, "analysis-status").text.startswith(
        f"Your accuracy {report['players']['1']['accuracy']} over {len(report['decisions'])} decisions")
    assert len(d.find_elements(By.CSS_SELECTOR, "#analysis-graph .round-line")) == len(report["graph"]["points"]) - \
        len(report["decisions"]) - 1 == 2
    assert len(d.find_elements(By.CSS_SELECTOR, "#analysis-graph circle.mark.blunder")) == 1
    items = d.find_elements(By.CSS_SELECTOR, "#analysis-moves li button")
    assert len(items) == 1 and "koi-koi, best stop: blunder" in items[0].text
    items[0].click()
    wait_for(d, lambda d: d.find_element(By.ID, "analysis-board").is_displayed(), "the board of the move")
    board = flagged[0]["board"]

    def shown(where: str) -> list[str]:
        return [c.get_attribute("data-card") for c in d.find_elements(By.CSS_SELECTOR, f"#{where} .card")]

    assert shown("analysis-hand") == [f"{m},{i}" for m, i in board["hand"]] and board["hand"]
    assert shown("analysis-field") == [f"{m},{i}" for m, i in board["field"]]
    assert shown("analysis-pile") == [f"{m},{i}" for m, i in board["pile"]]
    assert d.find_element(By.ID, "analysis-chosen").text.startswith("koi-koi")
    assert d.find_element(By.ID, "analysis-best").text.startswith("stop")
    for side, value in (("best", flagged[0]["best_value"]), ("chosen", flagged[0]["value"])):
        assert d.find_element(By.ID, f"analysis-{side}").text.endswith(f"P(win) {100 * value:.1f}%")
    assert d.find_element(By.CSS_SELECTOR, "#analysis-moves li.selected")
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    d.save_screenshot(str(tmp_path / "analysis.png"))
    assert (tmp_path / "analysis.png").stat().st_size > 10_000
    next(service, None)  # the server stops
