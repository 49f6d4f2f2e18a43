"""llama.cpp's own server, as the xllamacpp wheel embeds it, serving the tiny generated GGUF
(scripts/tiny_gguf.py) on 127.0.0.1: a real local server for the interop tests, started and
stopped by them. Run as a program it serves until stdin closes: ``python -m tests.llama_server
MODEL.gguf`` prints the server's address on its first line."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import ROOT


@contextmanager
def llama_server(model: Path, parallel: int = 1) -> Iterator[str]:
    """Serve ``model``; yields the /v1 base URL. One slot by default, as a small local server
    runs: requests beyond it queue."""
    process = subprocess.Popen([sys.executable, "-m", "tests.llama_server", str(model),
                                str(parallel)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()  # the server is up once it says where
        assert address.startswith("http://127.0.0.1:"), f"llama.cpp's server said {address!r}"
        yield f"{address}/v1"
    finally:
        process.kill()
        process.wait(timeout=60)


def _serve(model: str, parallel: int) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = 4096 * parallel
    params.n_parallel = parallel
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.use_jinja = True
    params.cpuparams.n_threads = 2
    server = xllamacpp.Server(params)
    print(server.listening_address, flush=True)
    sys.stdin.read()  # until the test closes the pipe or kills this process


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
