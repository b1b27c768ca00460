"""``koikoi bench TARGET``: speed benchmarks (``pipeline/benchmarks/<target>.py``), each a JSON line."""

import argparse
import importlib
import json
import os
import pkgutil
import platform

from .. import benchmarks
from ..cli_args import plain, summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="speed benchmarks (engine, encode, selfplay, ...)")
    targets = p.add_subparsers(dest="target", required=True, metavar="TARGET")
    for mod in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{benchmarks.__name__}.{mod.name}")
        doc = plain(module.__doc__)
        t = targets.add_parser(mod.name.replace("_", "-"), help=summary(module.__doc__), description=doc)
        module.add_arguments(t)
        t.set_defaults(func=lambda a, m=module: _run(m, a))


def _run(module, args: argparse.Namespace) -> int:
    machine = {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version()}
    print(json.dumps({**module.run(args), **machine}))
    return 0
