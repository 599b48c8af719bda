"""Errors conch raises. Every message is fit to show a user as one line."""

from __future__ import annotations


class ConchError(Exception):
    """Base class: a failure with a message fit for the user."""


class ConfigError(ConchError):
    """A config or prompt file is missing, unreadable or invalid (names file, line and key)."""


class UsageError(ConchError):
    """The command line asks for something that cannot be done (bad flag combination, value)."""


class InputError(ConchError):
    """A file the user named (peek file, prompt file) cannot be read."""


class ProviderError(ConchError):
    """The model provider failed: unreachable, refused credentials, timed out, or bad reply."""


class ModelOutputError(ConchError):
    """The model answered, but nothing usable could be extracted from its reply."""


EMPTY_REPLY = "the model returned an empty reply; rephrase the request or retry"


class PolicyRejection(ConchError):
    """The safety policy rejected a command."""


class ConfirmationRequired(ConchError):
    """A command needs the user's yes, and there is no terminal to ask on (or the user said
    no)."""


class NoOneToAsk(ConfirmationRequired):
    """A command needs the user's yes and no one can be asked (no terminal, no callback):
    raised by a front end's confirmation callback, audited as ``refused:unasked``."""


class NoHistoryError(ConchError):
    """There is no history entry to analyse."""
