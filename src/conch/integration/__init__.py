"""conch inside the user's own shell: the code for bash, zsh and fish (a key that turns the
command line into a command, a ``conch`` function that adds what conch ran to the shell's
history), the marked block in the shell's rc file, completions of conch's command line, and
the file the one-shot front end appends the commands it ran to (``CONCH_SHELL_HISTORY``).

Nothing here prints or asks: ``conch.cli.integrationcmd`` shows the block and asks before an
rc file changes.
"""
