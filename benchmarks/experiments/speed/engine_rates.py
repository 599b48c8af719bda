"""How fast the engine reads a prompt and writes tokens on this machine, and how many prompt
tokens a request brings: the floor under a warm request's time.

Run: python -m benchmarks.experiments.speed.engine_rates [--model FILE.gguf ...] [--requantize q8_0,f16]
        [--tasks 50] [--out benchmarks/experiments/speed/results/speed-engine-rates.json]

For each model file (default: the embedded model), one in-process llama.cpp server (xllamacpp,
two threads on a two-core machine) reads prompts of about 60, 120 and 230 tokens with the
prompt cache off and writes 16 tokens after each, twice; the engine's own timings give tokens
per second for both. Then, for the latency benchmark's fixed subset of requests, the number
of prompt tokens the request adds after the (cached) system prompt: the four worked examples
as earlier chat turns and the request, as conch sends them, and the same examples written
compactly in one message, to see what a shorter form could save.

``--requantize`` also measures other quantisations of the same weights, made from the first
model file with the ``gguf`` package (``pip install gguf``: every tensor dequantised, then
quantised again; tensors whose rows do not split into blocks stay F16) in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from benchmarks.speed.latency import subset  # noqa: E402

FILLER = "list the files in the directory and sort them by size"


def _server(model: Path) -> tuple[Any, str]:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = 4096
    params.cpuparams.n_threads = os.cpu_count() or 1
    params.cpuparams_batch.n_threads = os.cpu_count() or 1
    params.verbosity = -1
    server = xllamacpp.Server(params)
    return server, str(server.listening_address)


def rates(model: Path) -> dict[str, Any]:
    """Prompt and generation tokens per second for ``model``."""
    import httpx

    server, address = _server(model)
    rows: list[dict[str, Any]] = []
    with httpx.Client(timeout=600) as client:
        for words in (48, 96, 190):
            for _ in range(2):
                text = " ".join((FILLER.split() * 40)[:words])
                body = {
                    "prompt": f"{secrets.token_hex(4)} {text}",
                    "n_predict": 16,
                    "cache_prompt": False,
                    "temperature": 0,
                }
                timings = client.post(address + "/completion", json=body).json()["timings"]
                rows.append(
                    {
                        "prompt_tokens": timings["prompt_n"],
                        "prompt_per_s": round(timings["prompt_per_second"], 1),
                        "generated": timings["predicted_n"],
                        "generated_per_s": round(timings["predicted_per_second"], 1),
                    }
                )
    del server
    return {
        "model": str(model),
        "size_bytes": model.stat().st_size,
        "prompt_per_s_median": statistics.median(r["prompt_per_s"] for r in rows),
        "generated_per_s_median": statistics.median(r["generated_per_s"] for r in rows),
        "rows": rows,
    }


def requantize(model: Path, kind: str, folder: Path) -> Path:
    """A copy of ``model`` with its quantised tensors made ``kind`` (``q8_0``, ``q4_0``, ``f16``)."""
    import gguf
    import numpy as np
    from gguf import GGMLQuantizationType as Kind

    target = {"f16": Kind.F16, "q8_0": Kind.Q8_0, "q4_0": Kind.Q4_0}[kind]
    reader = gguf.GGUFReader(model)
    arch = reader.fields["general.architecture"]
    writer = gguf.GGUFWriter(folder / f"{kind}.gguf", bytes(arch.parts[arch.data[0]]).decode())
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        kind_of = field.types[0]
        if kind_of == gguf.GGUFValueType.ARRAY:
            sub = field.types[1]
            if sub == gguf.GGUFValueType.STRING:
                value: Any = [
                    bytes(field.parts[i]).decode("utf-8", "surrogateescape") for i in field.data
                ]
            else:
                value = [field.parts[i].tolist()[0] for i in field.data]
            writer.add_key_value(name, value, kind_of, sub_type=sub)
        elif kind_of == gguf.GGUFValueType.STRING:
            text = bytes(field.parts[field.data[0]]).decode("utf-8", "surrogateescape")
            writer.add_key_value(name, text, kind_of)
        else:
            writer.add_key_value(name, field.parts[field.data[0]].tolist()[0], kind_of)
    for tensor in reader.tensors:
        shape = list(reversed([int(x) for x in tensor.shape]))
        if tensor.tensor_type == Kind.F32:
            writer.add_tensor(
                tensor.name, np.asarray(tensor.data).reshape(shape), raw_dtype=Kind.F32
            )
            continue
        values = gguf.quants.dequantize(tensor.data, tensor.tensor_type).reshape(shape)
        use = target if len(shape) >= 2 and shape[-1] % 32 == 0 else Kind.F16
        if use == Kind.F16:
            writer.add_tensor(tensor.name, values.astype(np.float16), raw_dtype=Kind.F16)
        else:
            packed = gguf.quants.quantize(values.astype(np.float32), use)
            writer.add_tensor(tensor.name, packed, raw_shape=packed.shape, raw_dtype=use)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return folder / f"{kind}.gguf"


def prompt_tokens(model: Path, count: int) -> dict[str, Any]:
    """Tokens each subset request adds after the system prompt: as sent, and compact."""
    import httpx

    from conch.command.examples import nearest

    server, address = _server(model)
    system = [{"role": "system", "content": "S"}]
    with httpx.Client(timeout=600) as client:

        def count_tokens(messages: list[dict[str, str]]) -> int:
            prompt = client.post(address + "/apply-template", json={"messages": messages})
            tokens = client.post(address + "/tokenize", json={"content": prompt.json()["prompt"]})
            return len(tokens.json()["tokens"])

        base = count_tokens(system)
        turns: list[int] = []
        compact: list[int] = []
        for _, request in subset(count):
            examples = nearest(request, 4)
            messages = list(system)
            for example in examples:
                messages.append({"role": "user", "content": example.request})
                messages.append({"role": "assistant", "content": example.command})
            messages.append({"role": "user", "content": request})
            turns.append(count_tokens(messages) - base)
            listed = "\n".join(f"{e.request}\n$ {e.command}" for e in examples)
            one = {"role": "user", "content": f"Examples:\n{listed}\n\nRequest: {request}"}
            compact.append(count_tokens([*system, one]) - base)
    del server
    return {
        "requests": len(turns),
        "as_sent_median": statistics.median(turns),
        "as_sent_mean": round(statistics.mean(turns), 1),
        "compact_median": statistics.median(compact),
        "compact_mean": round(statistics.mean(compact), 1),
    }


def _cpu_flags() -> str:
    """Which of the vector instruction sets llama.cpp uses this CPU has (from /proc/cpuinfo)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    flags = next(
        (line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")),
        [],
    )
    wanted = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avxvnni")
    return " ".join(f for f in wanted if f in flags) or "none of avx/avx2/avx512"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, action="append", default=[])
    parser.add_argument("--requantize", default="", help="e.g. q8_0,f16 (needs gguf)")
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT
        / "benchmarks"
        / "experiments"
        / "speed"
        / "results"
        / "speed-engine-rates.json",
    )
    args = parser.parse_args()
    if not args.model:
        from conch.config.paths import Paths
        from conch.providers.local.model_files import embedded_model_path

        args.model = [embedded_model_path(Paths.default().cache_dir)]
    measured = [rates(model) for model in args.model]
    kinds = [k for k in args.requantize.split(",") if k]
    with tempfile.TemporaryDirectory(prefix="conch-requantize-") as tmp:
        for kind in kinds:
            made = requantize(args.model[0], kind, Path(tmp))
            measured.append({**rates(made), "model": f"{args.model[0].name} as {kind}"})
            made.unlink()
    flags = os.environ.get("CPU_FLAGS") or _cpu_flags()
    report = {
        "benchmark": "engine rates",
        "command": "python -m benchmarks.experiments.speed.engine_rates"
        + "".join(f" --model {m}" for m in args.model)
        + (f" --requantize {args.requantize}" if kinds else "")
        + f" --tasks {args.tasks}",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs; vector units: {flags}",
        "models": measured,
        "prompt_tokens": prompt_tokens(args.model[0], args.tasks),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "models"}, indent=2))
    for item in report["models"]:
        print(item["model"], item["prompt_per_s_median"], item["generated_per_s_median"])


if __name__ == "__main__":
    main()
