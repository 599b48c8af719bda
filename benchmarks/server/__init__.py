"""Benchmarks of ``conch serve``."""
