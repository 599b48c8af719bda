"""The version of conch (one place; ``conch.__version__`` is the same)."""

__version__ = "0.1.0"
