"""hpmkit: analyse, on a workstation, the files the hpm C core wrote on a target machine."""

# Kept equal to [project] version in pyproject.toml (a test checks it); read from here,
# not from package metadata, so a source checkout without an install reports it too.
__version__ = "0.1.0"
