"""One module per aggregate. Pages and the CLI read and write the store only through these functions,
which take an engine and return plain dataclasses (never ORM objects bound to a closed session)."""
