"""conch shell: a hybrid shell where shell lines run and plain language goes to the model.

``conch.shell.session.ShellSession`` is the shell as a library object: it takes one input
line at a time and carries it out as a stream of events (``events``), asking its front end
through callbacks; it never prints, reads stdin or exits. Built on it: ``parts`` (what one
shell holds), ``route`` and ``meta`` (where a line goes; the one table of meta commands),
``asking`` (model turns: a conversation, or a command from the one-shot pipeline, chosen by
``request``), ``offer`` (a suggested command checked, shown, and run on the user's say),
``auto`` (autonomous mode), ``context`` (what the model sees), ``run`` and ``state`` (the
user's lines in a pseudo-terminal, and what lasts between them), ``turns``, ``reply``,
``check`` and ``paths`` (a model turn and the verdict on its suggestions), ``models``,
``cost``, ``sessions`` (saved sessions), ``complete`` and ``configview``. The terminal side
is ``conch.cli.shellrepl``, ``conch.cli.shellview`` and ``conch.cli.shellinput``.
"""
