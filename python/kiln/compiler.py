"""Running the `kiln` executable: finding it, compiling a graph into a library, and the folder
where kiln's Python side keeps the graphs it exported and the libraries built from them."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

from .errors import KilnNotFoundError, compile_error


def find_kiln() -> str:
    """The kiln executable: $KILN, else `kiln` on PATH, else the build folder of the source tree
    this package sits in (`<repo>/build/kiln`, for a checkout used without installing)."""
    env = os.environ.get("KILN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise KilnNotFoundError(f"KILN={env} is not an executable file")
        return env
    on_path = shutil.which("kiln")
    if on_path:
        return on_path
    repo = Path(__file__).resolve().parents[2]
    candidate = repo / "build" / "kiln"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    raise KilnNotFoundError(
        "cannot find the kiln executable: set KILN=/path/to/kiln, put kiln on PATH, "
        f"or build it in {repo / 'build'} (cmake -S . -B build -G Ninja && ninja -C build kiln)"
    )


def cache_root() -> Path:
    """Where exported graphs and their libraries are kept: $KILN_PYTHON_CACHE, else
    $XDG_CACHE_HOME/kiln/python (~/.cache/kiln/python)."""
    env = os.environ.get("KILN_PYTHON_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "kiln" / "python"


def graph_digest(graph_text: str, sidecars: dict[str, bytes] | None = None, extra: Sequence[str] = ()) -> str:
    """A content hash of a graph file, the data files it names and the options it is built with.
    Libraries live in folders named by it, so a loaded library is never replaced under the same
    path (dlopen would keep returning the old one)."""
    h = hashlib.sha256(graph_text.encode())
    for rel in sorted(sidecars or {}):
        h.update(b"\0" + rel.encode() + b"\0" + hashlib.sha256(sidecars[rel]).digest())
    for item in extra:
        h.update(b"\0opt\0" + item.encode())
    return h.hexdigest()[:32]


def run_kiln(args: Sequence[str], *, kiln: str | None = None) -> str:
    """Runs `kiln ARGS...`; returns what it printed, raising the KilnCompileError subclass of its
    exit code on failure."""
    exe = kiln or find_kiln()
    proc = subprocess.run([exe, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise compile_error(proc.returncode, proc.stdout, "kiln " + " ".join(args[:1]))
    return proc.stdout


def compile_graph_file(
    graph_file: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    name: str | None = None,
    options: Sequence[str] = (),
    kiln: str | None = None,
) -> Path:
    """`kiln compile GRAPH -o OUT_DIR [--name NAME] OPTIONS...`; returns the library's path.
    kiln's own cache makes an unchanged graph cost a few milliseconds."""
    args = ["compile", str(graph_file), "-o", str(out_dir)]
    if name:
        args += ["--name", name]
    args += list(options)
    output = run_kiln(args, kiln=kiln)
    # kiln prints "wrote DIR/libNAME.so, NAME.h, NAME.cpp"
    for word in output.replace(",", " ").split():
        if word.endswith(".so") and os.path.basename(word).startswith("lib"):
            return Path(word)
    libs = sorted(Path(out_dir).glob("lib*.so"))
    if len(libs) == 1:
        return libs[0]
    raise compile_error(0, output, "kiln compile (no library reported)")


def write_json(path: Path, graph: dict) -> str:
    """Writes a graph dict as kiln reads it (UTF-8, non-finite floats already spelled as
    strings); returns the text."""
    text = json.dumps(graph, indent=1, allow_nan=False, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return text
