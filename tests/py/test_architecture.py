"""docs/architecture.md stays true: its rooms table names every package and module of
python/hpmkit and every folder of src/, every import and #include runs the way the table
allows, the documented graph runs one way (no cycle), and the files and modules the page names
exist. One symboliser: only hpmkit.profile.symbols reads ELF files."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

DOC = ROOT / "docs" / "architecture.md"
PKG = ROOT / "python" / "hpmkit"
# -I folders of the Makefile, in the order the compiler searches them after the file's own
INCLUDE_DIRS = ["include", "src/lib", "src/bench", "src/util", "src/sym", "src/perffile", "include/hpm-papi"]


def rooms(text: str | None = None) -> dict[str, tuple[str, set[str]]]:
    """room -> (side, rooms it may import) from the page's table."""
    out = {}
    for line in (DOC.read_text() if text is None else text).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1] in ("Python", "C"):
            name = cells[0].strip("`")
            out[name] = (cells[1], set(re.findall(r"`([^`]+)`", cells[2])))
    return out


def headings() -> str:
    return "\n".join(l for l in DOC.read_text().splitlines() if l.startswith("### "))


# ---- what the tree has -------------------------------------------------------------------


def python_rooms() -> list[str]:
    names = ["hpmkit"]
    for p in sorted(PKG.iterdir()):
        if p.is_dir() and (p / "__init__.py").is_file():
            names.append(f"hpmkit.{p.name}")
        elif p.suffix == ".py" and p.name != "__init__.py":
            names.append(f"hpmkit.{p.stem}")
    return names


def room_of_module(mod: str, known: set[str]) -> str:
    parts = mod.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and ".".join(parts[:2]) in known else "hpmkit"


def python_imports() -> list[tuple[str, str, str]]:
    """(file, importing room, imported room) for every hpmkit import, also inside functions."""
    known = set(python_rooms())
    out = []
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG.parent).with_suffix("").parts
        mod = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        pkg = mod if rel[-1] == "__init__" else mod.rsplit(".", 1)[0]
        src = room_of_module(mod, known)
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "COMMAND_MODULES"
                                                    for t in node.targets):
                # the hpmkit command imports each room's subcommands by name (importlib)
                targets = [pkg + v.value for v in node.value.values if isinstance(v, ast.Constant)]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                    targets = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
                else:
                    targets = [node.module or ""]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                if t == "hpmkit" or t.startswith("hpmkit."):
                    dst = room_of_module(t, known)
                    if dst != src:
                        out.append((str(f.relative_to(ROOT)), src, dst))
    return out


def c_room(path: Path, c_rooms: set[str]) -> str | None:
    rel = path.relative_to(ROOT).as_posix()
    best = None
    for r in c_rooms:
        if (rel == r or rel.startswith(r + "/")) and (best is None or len(r) > len(best)):
            best = r
    return best


def c_includes(c_rooms: set[str]) -> list[tuple[str, str, str]]:
    """(file, including room, included room) for every quoted #include that resolves to a file
    of another documented room."""
    out = []
    files = [p for r in c_rooms for p in (ROOT / r).rglob("*") if p.suffix in (".c", ".h", ".def")]
    for f in sorted(set(files)):
        src = c_room(f, c_rooms)
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read_text(errors="replace"), re.M):
            for d in [f.parent] + [ROOT / i for i in INCLUDE_DIRS]:
                hit = (d / name).resolve()
                if hit.is_file():
                    dst = c_room(hit, c_rooms) if hit.is_relative_to(ROOT) else None
                    if dst and dst != src:
                        out.append((str(f.relative_to(ROOT)), src, dst))
                    break
    return out


# ---- the tests ---------------------------------------------------------------------------


def missing_rooms(table: dict) -> list[str]:
    wanted = python_rooms() + [f"src/{p.name}" for p in sorted((ROOT / "src").iterdir()) if p.is_dir()]
    return [w for w in wanted if w not in table]


def wrong_imports(table: dict) -> list[str]:
    return sorted({f"{f}: {s} -> {d}" for f, s, d in python_imports() if s in table and d not in table[s][1]})


def wrong_includes(table: dict) -> list[str]:
    c_rooms = {r for r, (side, _) in table.items() if side == "C"}
    return sorted({f"{f}: {s} -> {d}" for f, s, d in c_includes(c_rooms) if d not in table[s][1]})


def test_every_package_and_src_folder_is_on_the_page():
    table = rooms()
    missing = missing_rooms(table)
    assert not missing, f"add these rooms to the table of docs/architecture.md: {missing}"
    heads = headings()
    no_paragraph = [r for r in table if f"`{r}`" not in heads]
    assert not no_paragraph, f"give these rooms a paragraph (### heading) in docs/architecture.md: {no_paragraph}"
    gone = [r for r, (side, _) in table.items()
            if (side == "C" and not (ROOT / r).is_dir()) or (side == "Python" and r not in python_rooms())]
    assert not gone, f"docs/architecture.md names rooms that are gone: {gone}"


def test_documented_graph_runs_one_way():
    table = rooms()
    for r, (_side, allowed) in table.items():
        unknown = allowed - set(table)
        assert not unknown, f"{r} may import {unknown}, which are not rooms of the table"
    state: dict[str, int] = {}

    def visit(r, path):
        if state.get(r) == 1:
            raise AssertionError("the documented imports have a cycle: " + " -> ".join(path + [r]))
        if state.get(r) == 2:
            return
        state[r] = 1
        for d in sorted(table[r][1]):
            visit(d, path + [r])
        state[r] = 2

    for r in table:
        visit(r, [])


def test_python_imports_run_the_documented_way():
    assert len(python_imports()) > 30           # the walk sees the package's imports
    wrong = wrong_imports(rooms())
    assert not wrong, "imports against docs/architecture.md: " + "; ".join(wrong)


def test_c_includes_run_the_documented_way():
    table = rooms()
    seen = {(s, d) for _f, s, d in c_includes({r for r, (side, _) in table.items() if side == "C"})}
    # cross-room includes the build has today: the walk must see them to mean anything
    assert {("src/cli", "src/bench"), ("src/bench", "src/util"), ("src/lib", "include/hpm")} <= seen
    wrong = wrong_includes(table)
    assert not wrong, "#includes against docs/architecture.md: " + "; ".join(wrong)


def test_the_checks_bite():
    """A narrowed or missing row is reported, naming the file and the arrow."""
    table = rooms()
    narrowed = dict(table, **{"hpmkit.spe": ("Python", {"hpmkit.errors"})})
    assert any(w.startswith("python/hpmkit/spe/cli.py: hpmkit.spe -> hpmkit.profile")
               for w in wrong_imports(narrowed))
    narrowed = dict(table, **{"src/cli": ("C", {"include/hpm", "src/util"})})
    assert "src/cli/cmd_bench.c: src/cli -> src/bench" in wrong_includes(narrowed)
    assert missing_rooms({k: v for k, v in table.items() if k != "src/bench"}) == ["src/bench"]


def test_named_files_and_modules_exist():
    text = DOC.read_text()
    missing = []
    for tok in set(re.findall(r"`([^`\s]+)`", text)):
        if tok.startswith("hpmkit.") or tok == "hpmkit":
            base = PKG.parent.joinpath(*tok.split("."))
            if not (base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()):
                missing.append(tok)
        elif re.fullmatch(r"(src|include|lab|data|tools|workloads|bench|examples|docs)/[\w./-]*", tok):
            if not (ROOT / tok).exists():
                missing.append(tok)
    assert not missing, f"docs/architecture.md names what the tree does not have: {sorted(missing)}"


def test_readme_links_the_page():
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text()


def test_one_symboliser():
    """ELF files are read in one module of the package; SPE has no symbol tables of its own."""
    readers = sorted(f.relative_to(PKG).as_posix() for f in PKG.rglob("*.py")
                     if re.search(r"^\s*(from|import) elftools", f.read_text(), re.M))
    assert readers == ["profile/symbols.py"]
    assert not (PKG / "spe" / "symbols.py").exists()
