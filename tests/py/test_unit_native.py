"""The C unit tests (tests/c) on this machine's real kernel: every test runs, none skipped."""
from conftest import BUILD, require, run


def test_c_unit_tests_all_pass():
    unit = require(BUILD / "tests" / "unit")
    listed = run([unit, "--list"], check_rc=0).stdout.splitlines()
    p = run([unit], cwd=str(BUILD.parent))
    print(p.stdout)
    assert p.returncode == 0, p.stdout
    assert p.stdout.splitlines()[-1] == f"{len(listed)} passed, 0 failed, 0 skipped"
