"""``koikoi play``: serve the play page on a loopback port and open it in the default browser."""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
import webbrowser
from pathlib import Path

from ..cli import UserError

RECORDS_DIR = "data/played"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play against an agent in the browser (a local web app)")
    p.add_argument("--opponent", metavar="SPEC", default=None,
                   help="agent spec: random, heuristic or a model directory (default: the strongest trained "
                        "model present, else heuristic); the page can choose another")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--no-browser", action="store_true", help="do not open the page in the default browser")
    p.add_argument("--records", default=RECORDS_DIR, help=f"where finished games are written (default {RECORDS_DIR})")
    p.add_argument("--threads", type=int, default=1, help="torch threads for model agents (default 1)")
    p.set_defaults(func=run)


def _check_port(host: str, port: int) -> None:
    """Fail with one line now rather than after uvicorn has logged a traceback."""
    if not 0 < port < 65536:
        raise UserError(f"--port must be in 1..65535, got {port}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise UserError(f"--host {host!r}: {e.strerror}") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            raise UserError(f"cannot listen on {host}:{port} ({e.strerror}); choose another --port") from None


def _open_when_ready(server, url: str) -> None:  # noqa: ANN001 (uvicorn.Server)
    while not server.started and not server.should_exit:
        time.sleep(0.05)
    if server.started:
        webbrowser.open(url)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..duel.runner import set_torch_threads
    from ..play.app import create_app
    from ..play.games import Games
    from ..play.opponents import default_opponent

    if args.threads < 1:
        raise UserError(f"--threads must be >= 1, got {args.threads}")
    _check_port(args.host, args.port)
    opponent = args.opponent or default_opponent()
    if args.opponent is None and opponent == "heuristic":
        print(f"koikoi play: no trained model under {Path.cwd() / 'models'} (run it in the project directory, or "
              "pass --opponent DIR): playing the heuristic agent", file=sys.stderr)
    games = Games(args.records, opponent)
    try:
        games.agents.load(opponent, seed=0)  # a bad --opponent fails here, in one line, not in the page
    except ValueError as e:
        raise UserError(f"--opponent: {e}") from None
    set_torch_threads(args.threads)
    try:
        games.records_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"--records {args.records}: {e.strerror}") from None
    server = uvicorn.Server(uvicorn.Config(create_app(games), host=args.host, port=args.port, log_level="warning"))
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(args.host, args.host)  # all addresses: open the local one
    url = f"http://{f'[{shown}]' if ':' in shown else shown}:{args.port}/"
    print(f"koikoi play: {url} against {opponent}; finished games go to {games.records_dir}; Ctrl+C stops",
          file=sys.stderr)
    if not args.no_browser:
        threading.Thread(target=_open_when_ready, args=(server, url), daemon=True).start()
    server.run()
    return 0
