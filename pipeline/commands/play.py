"""``koikoi play``: serve the play page on a loopback port and open it in the default browser."""

import argparse
import ipaddress
import os
import socket
import sys
import tempfile
import threading
import time
import webbrowser
from pathlib import Path

from ..cli_args import UserError, as_user_error, int_range
from ..play.games import Games
from ..play.guard import LOOPBACK
from ..play.opponents import MODELS_ROOT, default_judge, default_opponent, find_models, warm_up
from ..runtime.hardware import pin_worker_threads

RECORDS_DIR = "data/played"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play against an agent in the browser (a local web app)")
    p.add_argument("--opponent", metavar="SPEC", default=None,
                   help="random, heuristic, a model directory, search:<model directory>[?options] (default: champion)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; no authentication)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--no-browser", action="store_true", help="do not open the page in the default browser")
    p.add_argument("--records", default=RECORDS_DIR, help=f"where finished games are written (default {RECORDS_DIR})")
    p.add_argument("--models", metavar="DIR", default=None, help="offer the models under DIR (default models/)")
    p.add_argument("--threads", type=int_range(1), default=1, help="torch and BLAS threads (default 1)")
    p.add_argument("--deals", metavar="N", type=int_range(0), default=None,
                   help="deals per searched decision of the searchers offered (default: as the duels measured them)")
    p.set_defaults(func=run)


def _check_port(host: str, port: int) -> str:
    """The address ``host`` names; one line now rather than uvicorn's traceback later."""
    if not 0 < port < 65536:
        raise UserError(f"--port must be in 1..65535, got {port}")
    with as_user_error(socket.gaierror, f"--host {host!r}: ", strerror=True):
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            raise UserError(f"cannot listen on {host}:{port} ({e.strerror}); choose another --port") from None
    return str(addr[0])


def _addresses(address: str, port: int) -> tuple[str, str, bool]:
    """``(where it listens, the URL to open on this machine, whether others can reach it)``."""
    ip = ipaddress.ip_address(address.split("%")[0])
    bracket = (lambda a: f"[{a}]") if ip.version == 6 else (lambda a: a)
    listening = f"{bracket(address)}:{port}" + (" (every network interface)" if ip.is_unspecified else "")
    local = ("::1" if ip.version == 6 else "127.0.0.1") if ip.is_unspecified else address
    return listening, f"http://{bracket(local)}:{port}/", not ip.is_loopback


def served_hosts(address: str) -> list[str]:
    """The ``Host`` names a client may use: the address, loopback's names, on every interface the machine's too."""
    ip = ipaddress.ip_address(address.split("%")[0])
    hosts = [address, *(LOOPBACK if ip.is_loopback or ip.is_unspecified else ())]
    if ip.is_unspecified:
        for name in {socket.gethostname(), socket.getfqdn()}:
            hosts.append(name)
            try:
                hosts += [str(info[4][0]).split("%")[0] for info in socket.getaddrinfo(name, None)]
            except OSError:
                pass
    return list(dict.fromkeys(hosts))


def _open_when_ready(server, url: str) -> None:  # noqa: ANN001 (uvicorn.Server)
    while not server.started and not server.should_exit:
        time.sleep(0.05)
    if server.started:
        webbrowser.open(url)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..play.app import create_app  # fastapi, starlette: loaded only when this runs
    address = _check_port(args.host, args.port)
    models_root = args.models or MODELS_ROOT
    if args.models is not None and not Path(args.models).is_dir():
        raise UserError(f"--models {args.models}: no such directory")
    opponent, blame = args.opponent, "--opponent"
    if opponent is None and args.models is None:
        opponent, why = default_opponent(deals=args.deals)
        blame = f"the default opponent {opponent} (pass --opponent to choose another)"
        print(f"koikoi play: {why}", file=sys.stderr)
    elif opponent is None:
        opponent = next(iter(find_models(models_root)), "heuristic")
        blame = f"the first model under --models {args.models}"
        print(f"koikoi play: playing {opponent}, the first model under --models {args.models}", file=sys.stderr)
    games = Games(args.records, opponent, models_root=models_root, deals=args.deals, judge=default_judge())
    with as_user_error(prefix=f"{blame}: "):
        agent = games.opponents.load(opponent, seed=0)  # a bad opponent fails here, in one line, not in the page
    pin_worker_threads(args.threads)
    warm_up(agent)  # a compiled setup pays its compile now, not in the first replies
    with as_user_error(OSError, f"--records {args.records}: ", strerror=True):
        games.records_dir.mkdir(parents=True, exist_ok=True)
    if not os.access(games.records_dir, os.W_OK):
        print(f"koikoi play: warning: --records {games.records_dir} is not writable: finished games stay in memory "
              f"until it is (or until the server stops)", file=sys.stderr)
    app = create_app(games, hosts=[args.host, *served_hosts(address)])
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning"))
    listening, url, exposed = _addresses(address, args.port)
    print(f"koikoi play: {url} (listening on {listening}) against {opponent}; finished games go to "
          f"{games.records_dir}; " + (f"{games.judges.spec} analyses them" if games.judges.spec else
                                      "no trained model to analyse them") + "; Ctrl+C stops", file=sys.stderr)
    if exposed:
        print(f"koikoi play: warning: the server has no authentication and listens on {listening}: anyone who "
              f"can reach it can play, read its games' records and use this machine's CPU (--host 127.0.0.1 "
              f"keeps it to this machine)", file=sys.stderr)
    if not args.no_browser:
        threading.Thread(target=_open_when_ready, args=(server, url), daemon=True).start()
    try:
        server.run()
    finally:
        fallback = Path(tempfile.gettempdir()) / "koikoi-played"  # for the records the records directory refused
        for game_id, path in games.save_unsaved(fallback):
            where = f"written to {path}" if path else f"lost: neither {games.records_dir} nor {fallback} could take it"
            print(f"koikoi play: the record of game {game_id} was {where}", file=sys.stderr)
    return 0
