"""The lab's host side without QEMU: cpio archives, console protocol, damage detection."""
import base64
import subprocess
import zlib

import pytest

from hpmkit.lab import cpio
from hpmkit.lab.protocol import LabError, parse


def frame(name: bytes | str, data: bytes, crc=None, cut=False) -> str:
    b = base64.b64encode(data).decode()
    lines = [b[i:i + 76] for i in range(0, len(b), 76)] or [""]
    crc = zlib.crc32(data) if crc is None else crc
    s = f"@@HPMLAB FILE {name} {len(data)} {crc:08x}@@\n" + "\n".join(lines) + "\n"
    return s if cut else s + "@@HPMLAB END@@\n"


def console(*parts, done=True):
    s = "[    0.000000] Linux version 6.1\n\n@@HPMLAB BEGIN 1@@\n@@HPMLAB STATUS 3@@\n" + "".join(parts)
    return s + ("@@HPMLAB DONE 1@@\nreboot: Power down\n" if done else "")


def test_result_round_trip():
    blob = bytes(range(256)) * 40
    r = parse(console(frame("stdout", b"hello\n"), frame("stderr", b""),
                      frame("out/my file.bin", blob)), "riscv64")
    assert r.status == 3 and r.stdout == b"hello\n" and r.stderr == b""
    assert r.files["out/my file.bin"] == blob


def test_damaged_transfer_is_an_error():
    with pytest.raises(LabError, match="'stdout' arrived damaged"):
        parse(console(frame("stdout", b"abc", crc=1)), "aarch64")


def test_cut_transfer_is_an_error():
    with pytest.raises(LabError, match="transfer of 'stdout' was cut off"):
        parse(console(frame("stdout", b"abc" * 100, cut=True), done=False), "aarch64")


def test_panic_and_silence_are_errors():
    with pytest.raises(LabError, match="Kernel panic - not syncing: No working init found"):
        parse("[ 1.0] Kernel panic - not syncing: No working init found.\n", "riscv64")
    with pytest.raises(LabError, match="never started the command"):
        parse("OpenSBI v1.1\n", "riscv64")
    with pytest.raises(LabError, match="stopped before reporting"):
        parse(console(frame("stdout", b"x"), done=False), "riscv64")


def test_cpio_is_read_by_gnu_cpio(tmp_path):
    arc = cpio.build({"init": b"\x7fELF...", "bin/hpm": b"x" * 5, "lab/argv": b"hpm\0list\0"},
                     ["proc", "bin", "lab"])
    assert len(arc) % 512 == 0
    p = subprocess.run(["cpio", "-itv"], input=arc, capture_output=True, check=True)
    names = [l.split()[-1] for l in p.stdout.decode().splitlines()]
    assert names == ["proc", "bin", "lab", "bin/hpm", "init", "lab/argv"]
    p = subprocess.run(["cpio", "-id", "--quiet"], input=arc, cwd=tmp_path, check=True)
    assert (tmp_path / "lab" / "argv").read_bytes() == b"hpm\0list\0"
    assert (tmp_path / "bin" / "hpm").stat().st_mode & 0o111


def test_a_missing_guest_command_points_at_shell(monkeypatch):
    # no guest is booted: the message the CLI gives when the guest cannot exec the command
    import errno

    from hpmkit.lab import cli, guest
    monkeypatch.setattr(guest, "bin_names", lambda arch: ["hpm", "ksuite"])
    e = cli._cannot_run("riscv64", "sh", errno.ENOENT, shell=False)
    assert e.exit_code == 127
    assert str(e) == ("riscv64 guest: cannot run 'sh': No such file or directory (the guest's PATH "
                      "is /bin: hpm, ksuite; no shell unless asked: for pipes, redirections and "
                      "loops give --shell and the script as one quoted argument, e.g. hpmkit lab "
                      "run --arch riscv64 --shell -- 'ksuite list | head -3'; other programs: --add a "
                      "static binary)")
    assert "busybox" not in str(e).split("; ", 1)[1]
    # the hint's own command line is one `lab run` takes
    from hpmkit.cli import _parser
    argv = ["lab", "run", "--arch", "riscv64", "--shell", "--", "ksuite list | head -3"]
    args = _parser(argv).parse_args(argv)
    assert args.shell and args.argv[-1] == "ksuite list | head -3" and args.run is cli._run
    e = cli._cannot_run("aarch64", "sh", errno.EACCES, shell=True)
    assert e.exit_code == 126 and "--shell runs the script with /bin/sh" in str(e)
