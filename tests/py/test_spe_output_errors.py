"""Every `hpmkit spe` subcommand that writes files, on every way writing can fail: a directory
that is a file, an output name that is a directory, a read-only file system, a full file system
(a missing directory is made, and taken away again when the command fails). Each must print one line naming the path and what to do, exit 1,
publish nothing (not even the outputs that could be written) and leave no temporary file.

Read-only and full file systems are real: a small tmpfs mounted in a private mount namespace
(`unshare -m` as root, `unshare -rm` otherwise), where the command runs as a user runs it."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hpmkit.cli import main
from hpmkit.spe import synth
from hpmkit.spe.perfwrite import write_perf_data

HPMKIT = Path(sys.executable).parent / "hpmkit"

# command -> (arguments before the output, how the output is given, the files it would write)
COMMANDS = {
    "decode-csv": (["decode", "{in}", "-o"], "{out}/run", ["run-ldst.csv", "run-branch.csv", "run-other.csv"]),
    "decode-parquet": (["decode", "{in}", "--format", "parquet", "-o"], "{out}/run",
                       ["run-ldst.parquet", "run-branch.parquet", "run-other.parquet"]),
    "hotspots-html": (["hotspots", "{in}", "--html"], "{out}/hot.html", ["hot.html"]),
    "latency-html": (["latency", "{in}", "--html"], "{out}/lat.html", ["lat.html"]),
    "c2c-html": (["c2c", "{in}", "--html"], "{out}/c2c.html", ["c2c.html"]),
    "synth": (["synth", "--records", "3000"], "{out}/s.data", ["s.data"]),
}


@pytest.fixture(scope="module")
def spe_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("in") / "in.data"
    write_perf_data(p, [(0, -1, synth.RecordGen(1).stream(3000)), (1, -1, synth.RecordGen(2).stream(2000))])
    return p


def argv(cmd, infile, outdir):
    pre, out, _files = COMMANDS[cmd]
    args = [a.replace("{in}", str(infile)) for a in pre] + [out.replace("{out}", str(outdir))]
    if cmd == "synth":
        args = [args[0], args[-1]] + args[1:-1]  # synth OUT --records N
    return args


def one_line_error(err: str, path_part: str) -> None:
    assert err.count("\n") == 1 and err.startswith("hpmkit: cannot write "), err
    assert path_part in err and "Traceback" not in err


def run_inproc(capsys, args):
    rc = main(["spe", *args])
    out, err = capsys.readouterr()
    return rc, err


@pytest.mark.parametrize("cmd", COMMANDS)
def test_missing_directories_are_made(capsys, tmp_path, spe_file, cmd):
    """`-o out/run` into a folder that does not exist yet (the --help example): made (issue 24)."""
    rc, err = run_inproc(capsys, argv(cmd, spe_file, tmp_path / "no" / "such"))
    assert rc == 0, err
    assert sorted(p.name for p in (tmp_path / "no" / "such").iterdir()) == sorted(COMMANDS[cmd][2])


@pytest.mark.parametrize("cmd", ["decode-csv", "decode-parquet", "hotspots-html"])
def test_made_directories_go_when_the_command_fails(capsys, tmp_path, cmd):
    """Input that fails while it is decoded: no file, no temporary file, no new empty folder."""
    bad = tmp_path / "in" / "bad.data"
    bad.parent.mkdir()
    write_perf_data(bad, [(0, -1, synth.RecordGen(1).stream(500))])
    bad.write_bytes(bad.read_bytes()[:-300])   # cut short: found while the AUX data is read
    rc, err = run_inproc(capsys, argv(cmd, bad, tmp_path / "out" / "deep"))
    assert rc == 1 and err.count("\n") == 1 and "truncated" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_directory_is_a_file(capsys, tmp_path, spe_file, cmd):
    (tmp_path / "f").write_text("x")
    rc, err = run_inproc(capsys, argv(cmd, spe_file, tmp_path / "f"))
    assert rc == 1
    one_line_error(err, "is not a directory")
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_output_name_is_a_directory(capsys, tmp_path, spe_file, cmd):
    files = COMMANDS[cmd][2]
    blocker = tmp_path / files[len(files) // 2]  # for decode: the branch table, the others could be written
    blocker.mkdir()
    rc, err = run_inproc(capsys, argv(cmd, spe_file, tmp_path))
    assert rc == 1
    one_line_error(err, "it is a directory")
    assert [p.name for p in tmp_path.iterdir()] == [blocker.name]  # nothing published, no temporary file
    assert list(blocker.iterdir()) == []


def in_tmpfs(args, options: str, mnt: Path):
    """Run `hpmkit spe ARGS` with its output directory `mnt` a fresh tmpfs (mount options), in a
    private mount namespace. Returns (exit status, stderr, names left in the directory)."""
    unshare = shutil.which("unshare")
    if not unshare:
        pytest.fail("unshare (util-linux) is missing: it makes the read-only and full file systems")
    script = ('mount -t tmpfs -o "$O" none "$M" || exit 99\n'
              '"$@" >/dev/null; rc=$?\n'  # reports on stdout are not the point here
              'echo "rc=$rc"; ls -A "$M"')
    ns = [unshare, "-m"] if os.geteuid() == 0 else [unshare, "-rm"]
    full = [a.replace("{out}", str(mnt)) for a in args]
    p = subprocess.run([*ns, "sh", "-c", script, "sh", str(HPMKIT), "spe", *full], capture_output=True, text=True,
                       env={**os.environ, "M": str(mnt), "O": options}, timeout=120)
    lines = p.stdout.splitlines()
    if p.returncode == 99 or not lines or not lines[0].startswith("rc="):
        pytest.fail(f"could not mount a tmpfs in a private mount namespace: {p.stderr.strip()}")
    return int(lines[0][3:]), p.stderr, lines[1:]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_read_only_file_system(tmp_path, spe_file, cmd):
    rc, err, left = in_tmpfs(argv(cmd, spe_file, "{out}"), "ro,size=1m", tmp_path)
    assert rc == 1
    one_line_error(err, "read-only")
    assert left == []


@pytest.mark.parametrize("cmd", COMMANDS)
def test_full_file_system(tmp_path, spe_file, cmd):
    rc, err, left = in_tmpfs(argv(cmd, spe_file, "{out}"), "size=4k", tmp_path)
    assert rc == 1
    one_line_error(err, "no space left")
    assert left == []


def test_the_tmpfs_itself_works(tmp_path, spe_file):
    """The same command succeeds on a tmpfs big enough (the failures above are the file system's)."""
    rc, err, left = in_tmpfs(argv("decode-parquet", spe_file, "{out}"), "size=16m", tmp_path)
    assert rc == 0, err
    assert sorted(left) == sorted(COMMANDS["decode-parquet"][2])
