"""conch: a language model behind the Unix shell, safely.

The public names below are imported on first use, so ``import conch`` stays instant and the
model stack loads only when a provider needs it::

    from conch import PolicyContext, assess

    verdict = assess("rm -rf ~", PolicyContext())

``conch.Session`` is the agent: a model, its tools and a conversation::

    from conch import Session

    print(Session.local().chat("Which files here are over 10 MB?"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conch._lazy import lazy_exports
from conch.version import __version__ as __version__

# name -> the module that defines it
_PUBLIC = {
    # messages and events
    "Message": "conch.messages",
    "GenerationOptions": "conch.messages",
    "ToolSpec": "conch.messages",
    "ToolCall": "conch.messages",
    "ToolResult": "conch.messages",
    "TextDelta": "conch.messages",
    "Stage": "conch.messages",
    "Note": "conch.messages",
    "Finished": "conch.messages",
    "ProviderEvent": "conch.messages",
    # errors
    "ConchError": "conch.errors",
    # the safety policy
    "assess": "conch.policy",
    "Decision": "conch.policy",
    "PolicyContext": "conch.policy",
    "Verdict": "conch.policy",
    # providers
    "Provider": "conch.providers.base",
    "ScriptedProvider": "conch.providers.scripted",
    "complete": "conch.providers.base",
    "create_provider": "conch.providers.base",
    "register_provider": "conch.providers.base",
    # settings
    "Settings": "conch.config.settings",
    "load_settings": "conch.config.settings",
    # the request -> command pipeline
    "Pipeline": "conch.command.propose",
    "Proposal": "conch.command.proposal",
    "RequestContext": "conch.command.request",
    "detect_platform": "conch.host.platform",
    # tools the model can call
    "Tool": "conch.tools",
    "ToolRegistry": "conch.tools",
    "tool": "conch.tools",
    # the agent
    "Session": "conch.agent.session",
    "ToolOptions": "conch.agent.builtin",
}

__all__ = [
    "ConchError",
    "Decision",
    "Finished",
    "GenerationOptions",
    "Message",
    "Note",
    "Pipeline",
    "PolicyContext",
    "Proposal",
    "Provider",
    "ProviderEvent",
    "RequestContext",
    "ScriptedProvider",
    "Session",
    "Settings",
    "Stage",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolOptions",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "Verdict",
    "assess",
    "complete",
    "create_provider",
    "detect_platform",
    "load_settings",
    "register_provider",
    "tool",
]

__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC)


if TYPE_CHECKING:
    from conch.agent.builtin import ToolOptions
    from conch.agent.session import Session
    from conch.command.proposal import Proposal
    from conch.command.propose import Pipeline
    from conch.command.request import RequestContext
    from conch.config.settings import Settings, load_settings
    from conch.errors import ConchError
    from conch.host.platform import detect_platform
    from conch.messages import (
        Finished,
        GenerationOptions,
        Message,
        Note,
        ProviderEvent,
        Stage,
        TextDelta,
        ToolCall,
        ToolResult,
        ToolSpec,
    )
    from conch.policy import Decision, PolicyContext, Verdict, assess
    from conch.providers.base import Provider, complete, create_provider, register_provider
    from conch.providers.scripted import ScriptedProvider
    from conch.tools import Tool, ToolRegistry, tool
