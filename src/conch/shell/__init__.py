"""conch shell: a hybrid shell where shell lines run and plain language goes to the model.

The parts that need no terminal: ``route`` (where a line goes), ``context`` (what the model
sees), ``run`` and ``state`` (the user's lines in a pseudo-terminal, and what lasts between
them), ``turns`` (a model turn, and the policy's verdict on the commands it suggests),
``meta``, ``models``, ``cost``, ``sessions``, ``complete`` and ``configview``. The terminal
side is ``conch.cli.shellrepl`` and its neighbours.
"""
