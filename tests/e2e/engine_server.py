"""Serve a GGUF over llama.cpp's own OpenAI-compatible HTTP server, until killed.

    python tests/e2e/engine_server.py --model PATH --port PORT

End-to-end tests point conch's ``openai`` provider at it, so the HTTP path is tested against a
real llama.cpp server rather than a mock. SIGTERM or SIGINT stops it cleanly (exit 0).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from types import FrameType


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
        print(f"engine_server: cannot start: {exc}", file=sys.stderr, flush=True)
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


if __name__ == "__main__":
    sys.exit(main())
