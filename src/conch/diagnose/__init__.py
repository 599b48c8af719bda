"""What is wrong and why: ``conch doctor``'s checks of the setup (``doctor``: the
environment, the configuration and the sandbox; ``model``: the model file, the engine and the
provider; ``report``: the ``Check`` and ``Report`` they make) and ``conch --analyze``'s
diagnosis of the last command (``analysis``)."""
