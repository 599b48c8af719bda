"""conch: a language model behind the Unix shell, safely."""

__version__ = "0.1.0"
