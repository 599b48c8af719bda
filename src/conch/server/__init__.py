"""``conch serve``: an OpenAI-compatible HTTP API on ``conch.Session``, and a web chat page.

A front end, like the command line: each request is one turn of a ``Session`` whose tools
and execution mode come from the library (the server renders events, it never decides what
may run). ``app.create_app`` builds the ASGI application, ``run.serve`` runs it under uvicorn,
and ``config.ServerConfig`` holds what the operator chose (bind, key, caps, tools).

The package's ``__init__`` imports nothing, so ``conch --help`` never pays for starlette.
"""
