"""The ``conch`` command line: a thin front end over the library."""
