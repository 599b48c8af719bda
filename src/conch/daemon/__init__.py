"""The warm model service: one process keeps the local model loaded for every conch call.

A fresh ``conch`` process would load the model (seconds) and evaluate the same system prompt
(more seconds) on every call. The service does both once, then answers requests over a private
Unix socket; ``conch.daemon.client.DaemonProvider`` starts it on demand and talks to it.

This package's ``__init__`` imports nothing, so naming it costs nothing on the fast paths.
"""
