"""A hostile client against a live play server: ``python -m tests.play.hostile_client --requests 10000``.

Without ``--url`` it starts ``koikoi play`` itself (a temp records directory, six tiny model opponents under
a temp models root) and reads the server's RSS from /proc. It sends, in turn: games against each model
opponent (cycled, so the model pool is churned) played to their end with random legal moves; oversized
bodies; unknown keys of 10 KB and with newlines; cross-site form posts and foreign origins; another Host
(DNS rebinding); unknown game ids and illegal actions. It prints one JSON line: requests, 5xx answers,
unexpected answers, leaks (a response before a game's end from which its hidden cards follow: its seed
anywhere in it, or any number in it that deals the same round-1 hands as the finished game's record) and the
server's RSS at the start, after the first tenth of the requests (every model met) and at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

MODELS = 6  # model opponents cycled through: more than the pool keeps


class Client:
    """Raw HTTP/1.1 requests (any Host, any body) to ``url``; tallies what came back."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.requests = self.errors_5xx = self.unexpected = self.leaks = 0
        self.notes: list[str] = []

    def send(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None,
             expect: tuple[int, ...] = ()) -> tuple[int, Any]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers={"Host": f"{self.host}:{self.port}", **(headers or {})})
            r = conn.getresponse()
            raw = r.read()
        finally:
            conn.close()
        self.requests += 1
        self.errors_5xx += r.status >= 500
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        if expect and r.status not in expect:
            self._note(f"{method} {path[:40]}: {r.status}, expected {expect}")
        if r.status >= 400 and not _one_line_error(doc):
            self._note(f"{method} {path[:40]}: {r.status} without a short one-line JSON error")
        return r.status, doc

    def json(self, method: str, path: str, doc: Any = None, expect: tuple[int, ...] = ()) -> tuple[int, Any]:
        body = b"" if doc is None else json.dumps(doc).encode()
        return self.send(method, path, body, {"Content-Type": "application/json"}, expect)

    def _note(self, what: str) -> None:
        self.unexpected += 1
        if len(self.notes) < 10:
            self.notes.append(what)


def _one_line_error(doc: Any) -> bool:
    return (isinstance(doc, dict) and set(doc) == {"error"} and isinstance(doc["error"], str)
            and "\n" not in doc["error"] and len(doc["error"]) <= 300)


def numbers(doc: Any) -> set[int]:
    """Every integer a JSON document holds, as a value or written in a string (ids, keys, text)."""
    if isinstance(doc, bool):
        return set()
    if isinstance(doc, int):
        return {doc}
    if isinstance(doc, str):
        out, digits = set(), ""
        for c in doc + " ":
            if c.isdigit():
                digits += c
            elif digits:
                out.add(int(digits[:20]))
                digits = ""
        for token in doc.replace("-", " ").split():  # hex ids too
            try:
                out.add(int(token, 16))
            except ValueError:
                pass
        return out
    if isinstance(doc, dict):
        return set().union(*(numbers(k) | numbers(v) for k, v in doc.items())) if doc else set()
    if isinstance(doc, list):
        return set().union(*(numbers(v) for v in doc)) if doc else set()
    return set()


def leaked(responses: list[Any], record: dict) -> bool:
    """Whether a response sent before the game's end gives its hidden cards away: the seed the record names
    anywhere in it, or any number in it that, as a seed, deals the record's first round."""
    from pipeline.engine import GameState, ids_of
    from pipeline.engine.cards import card_tuple

    seed = record["info"].get("seed")
    first = record["record"]["round1"]["basic"]
    want = (sorted(map(tuple, first["initHand1"])), sorted(map(tuple, first["initHand2"])))
    found = set().union(*(numbers(r) for r in responses))
    if seed in found:
        return True
    for n in found:
        if 0 <= n < 2**63:
            s = GameState(seed=n, num_rounds=record["info"]["numRound"], init_points=record["info"]["player1InitPts"])
            h0, h1 = s.hands  # round 1's deal, before any move
            if (sorted(card_tuple(c) for c in ids_of(h0)), sorted(card_tuple(c) for c in ids_of(h1))) == want:
                return True
    return False


def play_a_game(c: Client, opponent: str, rng: random.Random) -> None:
    status, doc = c.json("POST", "/api/games", {"opponent": opponent, "rounds": 1}, expect=(201,))
    if status != 201:
        return
    gid, state, before = doc["id"], doc["state"], [doc]
    while state["decision"] != "over":
        status, doc = c.json("POST", f"/api/games/{gid}/actions", {"action": rng.choice(state["legal_actions"]),
                                                                   "move": state["move"]}, expect=(200,))
        if status != 200:
            return
        state = doc["state"]
        if state["decision"] != "over":
            before.append(doc)
            if rng.random() < 0.2:
                before.append(c.send("GET", f"/api/games/{gid}", expect=(200,))[1])
            if rng.random() < 0.1:  # the analysis comes after the game
                before.append(c.send("GET", f"/api/games/{gid}/analysis", expect=(409,))[1])
    status, record = c.send("GET", f"/api/games/{gid}/record", expect=(200,))
    if status == 200 and leaked(before, record):
        c.leaks += 1


def attacks(c: Client, rng: random.Random) -> None:
    """One of each kind of hostile request, with the answer each must get."""
    c.send("POST", "/api/games", b"{" + b" " * 70_000 + b"}", {"Content-Type": "application/json"}, expect=(413,))
    c.json("POST", "/api/games", {"x" * 10_000: 1}, expect=(400,))
    c.json("POST", "/api/games", {"a\nb\r\nc": 1}, expect=(400,))
    c.send("POST", "/api/games", b"rounds=1", {"Content-Type": "application/x-www-form-urlencoded"}, expect=(415,))
    c.send("POST", "/api/games", b'{"rounds": 1}', {"Content-Type": "text/plain"}, expect=(415,))
    c.send("POST", "/api/games", b"{}", {"Content-Type": "application/json", "Origin": "http://evil.example"},
           expect=(403,))
    c.send("GET", "/api/opponents", None, {"Host": "evil.example"}, expect=(400,))
    c.send("GET", "/api/games/" + "".join(rng.choice("0123456789abcdef") for _ in range(12)), expect=(404,))
    c.json("POST", "/api/games/nothing/actions", {"action": rng.randrange(-10, 60)}, expect=(404,))
    c.send("GET", "/static/../../etc/passwd", expect=(404,))


def rss_mb(pid: int | None) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def run(url: str, requests: int, pid: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Hostile traffic until ``requests`` requests were sent; the tallies and the server's RSS (MB)."""
    c = Client(url)
    rng = random.Random(seed)
    _, offered = c.send("GET", "/api/opponents", expect=(200,))
    models = [o for o in (offered or {}).get("choices", []) if o not in ("random", "heuristic")
              and not o.startswith("search:")] or ["random"]
    start, warm = rss_mb(pid), None
    i = 0
    while c.requests < requests:
        if warm is None and c.requests >= requests // 10:
            warm = rss_mb(pid)  # every model opponent met at least once (past the first tenth)
        if i % 2:
            attacks(c, rng)
        else:
            play_a_game(c, models[(i // 2) % len(models)], rng)
        i += 1
    return {"requests": c.requests, "5xx": c.errors_5xx, "unexpected": c.unexpected, "leaks": c.leaks,
            "rss_start_mb": start, "rss_warm_mb": warm, "rss_end_mb": rss_mb(pid), "models": len(models),
            "notes": c.notes}


def tiny_models(root: Path, n: int = MODELS) -> None:
    """``n`` saved untrained models (width 16, one layer) under ``root``: real model opponents, fast."""
    import torch

    from pipeline.net.model import KoiKoiNet, ModelConfig
    from pipeline.net.modelio import save_model

    for i in range(n):
        torch.manual_seed(i)
        save_model(KoiKoiNet(ModelConfig(width=16, ff=32, heads=2, layers=1, dropout=0.0)), root / f"m{i}",
                   {"kind": "sl"})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(tmp: Path) -> tuple[subprocess.Popen, str]:
    """``koikoi play`` on a free loopback port over six tiny models, records in ``tmp``; (process, url)."""
    tiny_models(tmp / "models")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "play", "--no-browser", "--port", str(port),
                             "--models", str(tmp / "models"), "--records", str(tmp / "played"),
                             "--opponent", "random"], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"koikoi play exited with {proc.returncode}") from None
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("koikoi play did not start")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000, help="requests to send (default 1000)")
    ap.add_argument("--url", default=None, help="a running server (default: start one on a free loopback port)")
    ap.add_argument("--pid", type=int, default=None, help="the running server's process id, for its RSS")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.url is not None:
        print(json.dumps(run(args.url, args.requests, args.pid, args.seed)))
        return 0
    with tempfile.TemporaryDirectory(prefix="koikoi-hostile-") as tmp:
        proc, url = serve(Path(tmp))
        try:
            out = run(url, args.requests, proc.pid, args.seed)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(json.dumps(out))
    return 0 if out["5xx"] == out["leaks"] == out["unexpected"] == 0 else 1


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
