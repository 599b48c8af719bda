"""The agent: a ``Session`` with a layered system prompt, built-in tools and the tool loop."""
