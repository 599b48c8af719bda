"""The engine server: a GGUF behind llama.cpp's own OpenAI-compatible HTTP server, on 127.0.0.1.

    python benchmarks/engine.py --model PATH --port PORT [--n-ctx 4096] [--parallel 1]

Run as a script, it serves until SIGTERM or SIGINT (exit 0). The benchmarks that need a model
server start it through ``serve()`` (conch's packaged model on a free port, stopped on the way
out); the end-to-end tests start the script themselves, so conch's HTTP path is tested
against a real llama.cpp server rather than a mock.

This file imports nothing of the repository at module level: the tests run it by its path.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

SCRIPT = Path(__file__).resolve()
START_SECONDS = 180.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", required=True, help="GGUF file to serve")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--n-ctx", type=int, default=4096, help="context size of each slot")
    parser.add_argument(
        "--parallel", type=int, default=1, help="slots: requests served at once, each cached"
    )
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--verbosity", type=int, default=1, help="llama.cpp log level (1: errors)")
    args = parser.parse_args(argv)

    import xllamacpp

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.n_ctx * args.parallel  # llama.cpp splits the context among slots
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = [args.host]
    params.port = args.port
    params.verbosity = args.verbosity
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        print(f"engine server: cannot start: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"listening on {server.listening_address}", flush=True)
    # Wake regularly: a bare wait() would delay signal handling on some platforms.
    while not stop.wait(0.5):
        pass
    # Deleting a listening Server joins an HTTP thread that never returns (xllamacpp), so
    # leave without running destructors: the OS frees the model and closes the socket.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def packaged_model() -> Path:
    """conch's embedded model, assembled in conch's cache on first use (then reused)."""
    from conch.config.paths import Paths
    from conch.providers.local.model_files import embedded_model_path

    return embedded_model_path(Paths.default().cache_dir)


@contextlib.contextmanager
def serve(log_path: Path, *, n_ctx: int = 4096, parallel: int = 1) -> Iterator[tuple[str, str]]:
    """Serve conch's packaged model on a free port until the block ends; yields (base URL
    ``http://127.0.0.1:PORT/v1``, model file path). The server's output goes to ``log_path``."""
    import httpx

    from benchmarks.common import log, stop_process

    model = packaged_model()
    port = free_port()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log(f"starting the model server on port {port} ({model.name}) ...")
    argv = [sys.executable, str(SCRIPT), "--model", str(model), "--port", str(port)]
    argv += ["--n-ctx", str(n_ctx), "--parallel", str(parallel)]
    with log_path.open("wb") as handle:
        process = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + START_SECONDS
        while True:
            if process.poll() is not None:
                raise SystemExit(f"model server exited with {process.returncode}; see {log_path}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/models", timeout=2.0).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"model server not ready after {START_SECONDS:.0f} s")
            time.sleep(0.25)
        yield base, str(model)
    finally:
        stop_process(process, 10)


def server_model(base_url: str) -> str:
    """The model id the server at ``base_url`` reports."""
    import httpx

    reply = httpx.get(f"{base_url.rstrip('/')}/models", timeout=10.0)
    reply.raise_for_status()
    return str(reply.json()["data"][0]["id"])


if __name__ == "__main__":
    sys.exit(main())
