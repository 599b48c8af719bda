"""How likely a model finds a given reply, asked of a llama.cpp server's native endpoints.

The sum of the log-probabilities of the reply's tokens, and of the end of the reply after
them, following ``messages`` in the model's own chat template. The server renders the
template (``/apply-template``), splits the reply into its tokens (``/tokenize``) and forces
them one by one (``/completion`` with a grammar of token ids); ``n_probs`` reports each forced
token's probability under the model before any sampling, so the score is the model's own.
Forcing the text instead of its tokens would let the model spell a word in unusual pieces,
which scores very differently.

The embedded engine (xllamacpp) is such a server inside the process, so the same code serves
``local`` and any llama.cpp server behind the ``openai`` provider.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from conch.errors import ProviderError
from conch.messages import Message


def token_count(client: httpx.Client, root: str, text: str) -> int | None:
    """How many tokens the server's tokenizer makes of ``text`` (``/tokenize``); None when
    the server cannot say (not llama.cpp, unreachable, or an unexpected reply)."""
    try:
        response = client.post(root + "/tokenize", json={"content": text})
        if response.status_code >= 400:
            return None
        tokens = response.json()["tokens"]
    except (httpx.HTTPError, ValueError, LookupError, TypeError):
        return None
    return len(tokens) if isinstance(tokens, list) else None


class Unsupported(Exception):
    """The server does not offer what scoring needs (not llama.cpp, or too old)."""


def reply_logprob(
    client: httpx.Client, root: str, messages: Sequence[Message], reply: str, where: str
) -> float:
    """The log-probability of ``reply`` after ``messages`` (see the module docstring).

    Raises ``Unsupported`` when the server lacks an endpoint, ``ProviderError`` when it
    cannot be reached or answers with something else than llama.cpp would."""

    def post(path: str, body: dict[str, Any]) -> Any:
        try:
            response = client.post(root + path, json=body)
        except httpx.HTTPError as exc:
            raise ProviderError(f"{where} could not score a reply: {exc}") from None
        status = response.status_code
        if status == 501 or (400 <= status < 500 and status not in (408, 429)):
            # Not there (404), refused (401, 403: a gateway that only passes chat requests),
            # or not understood (400: an older llama.cpp without token-id grammars).
            raise Unsupported(f"{path}: HTTP {status}")
        if response.status_code >= 400:
            raise ProviderError(f"{where} could not score a reply: HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError:
            raise Unsupported(f"{path}: not JSON") from None

    try:
        chat = [m.to_openai() for m in messages]
        prompt = post("/apply-template", {"messages": chat})["prompt"]
        tokens = post("/tokenize", {"content": reply})["tokens"]
        if not tokens:
            return 0.0
        grammar = "root ::= " + " ".join(f"<[{int(t)}]>" for t in tokens)
        completion = post(
            "/completion",
            {
                "prompt": prompt,
                "grammar": grammar,
                "n_predict": len(tokens) + 2,  # the reply, then the end of it
                "n_probs": 1,
                "temperature": 0,
                "cache_prompt": True,
            },
        )
        probabilities = completion["completion_probabilities"]
        return float(sum(p["logprob"] for p in probabilities))
    except (LookupError, TypeError, ValueError) as exc:
        raise Unsupported(f"unexpected reply: {exc}") from None
