"""A model turn of ``conch shell``: what is sent, and where the reply ends."""

from __future__ import annotations

from conch.messages import GenerationOptions
from conch.providers.base import drain
from conch.providers.scripted import ScriptedProvider
from conch.shell.context import EXEC_TAG, Context
from conch.shell.turns import model_turn


def test_the_reply_ends_where_the_model_would_invent_a_command_s_output() -> None:
    context = Context("system")
    context.record("wc -l server.log", 0, "4 server.log\n")
    provider = ScriptedProvider.of("Count them.\nCMD: wc -l server.log")
    reply = drain(model_turn(context, provider, "how many lines?", GenerationOptions(stop=("x",))))
    sent = provider.sent[0]
    assert sent.options.stop == ("x", EXEC_TAG)
    assert sent.messages[-1].content.startswith(EXEC_TAG)
    assert reply.commands == ("wc -l server.log",)
