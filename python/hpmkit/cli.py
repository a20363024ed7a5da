"""The `hpmkit` command: reports on the files the hpm core wrote on a target machine."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from . import __version__
from .errors import HpmkitError, UsageError

# modules with an add_parser(subparsers, formatter) function, in --help order, by the command
# each one adds: `hpmkit spe ...` imports only the spe module (start-up time is part of every
# command's run time)
COMMAND_MODULES = {
    "spe": ".spe.cli",
    "lab": ".lab.cli",
    "compare": ".compare.cli",
    "profile": ".profile.cli",
    "report": ".profile.report_cli",
}

MAX_COMPARE = 26  # files are labelled A..Z in the comparison table

STAT_EPILOG = """\
examples:
  hpm stat --json -e task-clock,page-faults -- ./app > run.json    (on the target)
  hpmkit stat-report run.json                  events, stddev, scaling, read path, metrics
  hpmkit stat-report board.json laptop.json    side by side, with B/A ratio columns
  hpmkit stat-report rv.json arm.json          one row per event whatever each table calls it:
                                               "instructions (B: INST_RETIRED)"
  hpmkit stat-report --csv a.json b.json > cmp.csv
"""

REGIONS_EPILOG = """\
examples:
  HPM_REGION_OUT=regions.json ./app            (on the target, app built with region markers)
  hpmkit regions regions.json                  calls, totals and per-call means per region
  hpmkit regions regions.json --sort page-faults
"""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage mistakes as the one-line `hpmkit: ...` all errors use."""

    def error(self, message: str) -> NoReturn:
        sub = self.prog.removeprefix("hpmkit").strip()
        where = f"{sub}: " if sub else ""
        self.exit(2, f"hpmkit: {where}{message} (see '{self.prog} --help')\n")


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    p = _Parser(
        prog="hpmkit",
        description="Analyse the files the hpm perf-monitoring core wrote on a target machine.",
        epilog="run 'hpmkit COMMAND --help' for the examples of each command",
    )
    p.add_argument("--version", action="version", version=f"hpmkit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    raw = argparse.RawDescriptionHelpFormatter

    s = sub.add_parser(
        "stat-report",
        help="tabulate 'hpm stat --json' files; compare several side by side",
        description="Tabulate one hpm-stat file; with two or more, compare them side by side "
        "with ratio columns against the first file (A).",
        epilog=STAT_EPILOG,
        formatter_class=raw,
    )
    s.add_argument("files", nargs="+", metavar="FILE.json", help="hpm-stat files (from hpm stat --json)")
    s.add_argument("--csv", action="store_true", help="write CSV to stdout instead of a table")
    s.set_defaults(run=_stat_report)

    r = sub.add_parser(
        "regions",
        help="tabulate an hpm-regions file (region markers)",
        description="Tabulate the regions of an hpm-regions file: calls, per-event totals and "
        "per-call means. Unmatched markers, dropped regions and errors are always printed.",
        epilog=REGIONS_EPILOG,
        formatter_class=raw,
    )
    r.add_argument("file", metavar="FILE.json", help="hpm-regions file (written at program exit)")
    r.add_argument("--sort", metavar="EVENT", help="order regions by this event's total, largest first")
    r.set_defaults(run=_regions)

    # Each component registers its own subcommands; modules import their heavy libraries
    # (pyarrow, duckdb, pyod) inside the command functions, so `--help` stays fast.
    import importlib
    first = argv[0] if argv else None
    mods = [COMMAND_MODULES[first]] if first in COMMAND_MODULES else COMMAND_MODULES.values()
    for mod in mods:
        importlib.import_module(mod, __package__).add_parser(sub, raw)
    return p


def _stat_report(args: argparse.Namespace) -> None:
    if len(args.files) > MAX_COMPARE:
        raise UsageError(f"stat-report: at most {MAX_COMPARE} files can be compared, got {len(args.files)}")
    from . import formats, report
    reps = [formats.load_stat(f) for f in args.files]  # every file is checked before any output
    if args.csv and len(reps) == 1:
        report.stat_csv(reps[0], sys.stdout)
    elif args.csv:
        report.compare_csv(reps, sys.stdout)
    else:
        sys.stdout.write(report.stat_text(reps[0]) if len(reps) == 1 else report.compare_text(reps))


def _regions(args: argparse.Namespace) -> None:
    from . import formats, report
    sys.stdout.write(report.regions_text(formats.load_regions(args.file), args.sort))


def main(argv: Sequence[str] | None = None) -> int:
    """Every command ends here: errors are one line, an interrupt is one line and exit 130
    (outputs are written to a temporary name and renamed when complete, so an interrupted
    command leaves no half-written file), a closed stdout ends the command quietly."""
    from .progress import close_all
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        args = _parser(argv).parse_args(argv)
        rc = args.run(args)
        sys.stdout.flush()
        if isinstance(rc, int):
            return rc
    except HpmkitError as e:
        close_all()
        _say(f"hpmkit: {e}")
        return e.exit_code
    except KeyboardInterrupt:
        close_all()
        _say("hpmkit: interrupted")
        _quiet_stdout()
        return 130
    except BrokenPipeError:
        # `hpmkit ... | head` closed the pipe: not an error. Files named by options are written
        # before the report goes to stdout, so they are complete.
        close_all()
        _quiet_stdout()
    except OSError as e:
        # the last resort: a read or write no command turned into its own message (a full disk
        # under stdout, a file that vanished) is still one line, never a traceback
        close_all()
        _say(f"hpmkit: {_os_error_line(e)}")
        _quiet_stdout()
        return 1
    return 0


def _os_error_line(e: OSError) -> str:
    """An OSError as the one line of an error: the file (or the standard output), the cause in
    words, and what to do."""
    from .errors import os_hint, os_reason
    names = [os.fspath(f) for f in (e.filename, e.filename2) if f is not None]
    what = " -> ".join(map(str, names)) if names else "a file or the standard output"
    return f"{what}: {os_reason(e, writing=False)}; {os_hint(e, writing=False)} and run the command again"


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: Python would otherwise report the unflushed rest at exit
    (a closed pipe) or print half a report after the interrupt line."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
