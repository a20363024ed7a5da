"""Arm SPE (Statistical Profiling Extension): decode perf.data AUX traces and raw buffers with
the C decoder (src/native/spe_*.c), write spe-parser tables, run the SPE analyses and the
false-sharing (c2c) report. Command line: `hpmkit spe --help` (cli.py); docs/spe.md."""
