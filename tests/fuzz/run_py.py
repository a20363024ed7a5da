"""atheris (coverage-guided, libFuzzer's engine) over one Python fuzz target (targets.py).

    .venv/bin/python tests/fuzz/run_py.py TARGET [libFuzzer options] CORPUS-DIR...

`make fuzz` runs it through tests/fuzz/run.sh; atheris is the optional extra hpmkit[fuzz].
A finding stops the run and leaves the input as crash-* (libFuzzer's -artifact_prefix).
"""
import os
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).parent))

# the readers are instrumented for coverage; pyarrow and numpy are not (their C code is not ours)
with atheris.instrument_imports(include=["hpmkit"]):
    import hpmkit.compare.truth  # noqa: F401
    import hpmkit.formats  # noqa: F401
    import hpmkit.lab.protocol  # noqa: F401
    import hpmkit.perfdata.reader  # noqa: F401
    import hpmkit.perfdata.scan  # noqa: F401
    import hpmkit.profile  # noqa: F401
    import hpmkit.profile.export  # noqa: F401
    import hpmkit.profile.model  # noqa: F401
    import hpmkit.profile.perfdata_ingest  # noqa: F401
    import hpmkit.profile.script_ingest  # noqa: F401
    import hpmkit.report  # noqa: F401

import targets  # noqa: E402


class Finding(Exception):
    pass


def main() -> None:
    target = sys.argv[1]
    if target not in targets.TARGETS:
        sys.exit(f"run_py.py: no target {target!r}; targets: {', '.join(targets.TARGETS)}")

    def one(data: bytes) -> None:
        why = targets.check(target, data)
        if why:
            raise Finding(why)

    # argv[0]: what libFuzzer runs again for -merge and -fork (run.sh's per-target wrapper)
    argv0 = os.environ.get("HPMKIT_FUZZ_ARGV0", sys.argv[0])
    atheris.Setup([argv0, *sys.argv[2:]], one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
