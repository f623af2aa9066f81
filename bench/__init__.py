"""Benchmarks, each run as a script from the repository root; a package so one can reuse another's store."""
