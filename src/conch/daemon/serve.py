"""``python -m conch.daemon serve``: the service process, started by a client."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from conch import version
from conch.config.settings import LocalSettings
from conch.daemon import protocol
from conch.daemon.backend import ServiceConfig
from conch.daemon.service import Service, log
from conch.errors import ConchError


def build_parser() -> argparse.ArgumentParser:
    """``python -m conch.daemon serve``: every setting comes from the client that starts it."""
    parser = argparse.ArgumentParser(prog="python -m conch.daemon")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the model service in the foreground")
    serve.add_argument("--socket", required=True, type=Path)
    serve.add_argument("--pid-file", type=Path)
    serve.add_argument("--model-path", required=True)
    serve.add_argument("--engine", default="auto")
    serve.add_argument("--n-ctx", type=int, default=LocalSettings().n_ctx)
    serve.add_argument("--n-threads", type=int)
    serve.add_argument("--cache-dir", required=True, type=Path)
    serve.add_argument("--idle-timeout", type=float, default=600.0)
    serve.add_argument("--backend", default=protocol.LOCAL_BACKEND)
    return parser


def config_from_args(args: argparse.Namespace) -> ServiceConfig:
    """The service config the command line describes."""
    local = LocalSettings(
        model_path=args.model_path,
        engine=args.engine,
        n_ctx=args.n_ctx,
        n_threads=args.n_threads,
    )
    socket_path: Path = args.socket
    return ServiceConfig(
        socket_path=socket_path,
        pid_file=args.pid_file or socket_path.with_suffix(".pid"),
        local=local,
        cache_dir=args.cache_dir,
        idle_timeout_s=args.idle_timeout,
        backend=args.backend,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run one service until it is stopped (SIGTERM, ``stop``) or stays idle too long."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format="%(asctime)s conch-daemon[%(process)d] %(message)s",
    )
    try:
        service = Service(config_from_args(args))
        service.check_free()
        log.info("conch %s loading %s", version.__version__, args.model_path)
        service.load_model()
        service.bind()
    except (ConchError, ValueError) as exc:
        log.error("not starting: %s", " ".join(str(exc).split()))
        return _exit(1)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda _signum, _frame: service.stop())
    log.info("serving on %s", service.config.socket_path)
    reason = service.serve_forever()
    log.info("exiting (%s)", reason)
    return _exit(0)


def _exit(code: int) -> NoReturn:
    # Engines run native threads that can stall interpreter teardown; everything that matters
    # (socket, pid file, log) is already closed or flushed by now.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
