"""kiln.compile: a graph (exported, a dict, or a file) -> `kiln compile` -> a loaded Function.

Exported graphs are written under kiln's Python cache in a folder named by their content hash
(graph text, sidecar files and compile options), and compiled there. A graph seen before is
loaded without running kiln again when its library is already there; kiln's own cache makes a
rebuild of a known graph in a fresh folder cost a few milliseconds. Folders are named by
content because dlopen of a replaced file at an already loaded path returns the old code; for
the same reason a caller-chosen out_dir must not be recompiled with other content while its
library is loaded in this process.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

from .compiler import cache_root, compile_graph_file, find_kiln, graph_digest
from .loader import Function, load


def _kiln_identity(exe: str) -> str:
    st = os.stat(exe)
    return f"{os.path.realpath(exe)}:{st.st_size}:{st.st_mtime_ns}"


def _materialise(graph, name: str | None) -> tuple[Path, str, dict[str, bytes] | None]:
    """(graph file path, text, sidecars) for an ExportedGraph, a dict or an existing file."""
    from .export import ExportedGraph

    if isinstance(graph, ExportedGraph):
        return None, graph.to_json(), graph.sidecar_bytes()
    if isinstance(graph, dict):
        return None, json.dumps(graph, indent=1, allow_nan=False, ensure_ascii=False) + "\n", {}
    path = Path(graph)
    return path, path.read_text(encoding="utf-8"), None


def library_for(graph, *, name: str | None = None, options: Sequence[str] = (), out_dir=None,
                kiln: str | None = None) -> Path:
    """Compiles a graph with kiln (cached) and returns the library's path.

    graph: an ExportedGraph, a graph dict, or the path of a graph file. out_dir: where the
    library goes (default: a content-addressed folder under kiln.compiler.cache_root())."""
    exe = kiln or find_kiln()
    path, text, sidecars = _materialise(graph, name)
    opts = list(options)
    if out_dir is None:
        digest = graph_digest(text, sidecars or {}, [*opts, f"name={name}", _kiln_identity(exe)])
        out_dir = cache_root() / digest
        libs = sorted(out_dir.glob("lib*.so")) if out_dir.is_dir() else []
        if len(libs) == 1 and (out_dir / "graph.json").is_file():
            return libs[0]
    out_dir = Path(out_dir)
    if path is None:
        path = out_dir / "graph.json"
        for rel, data in (sidecars or {}).items():
            target = out_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"graph.json.tmp{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        lib = compile_graph_file(tmp, out_dir, name=name, options=opts, kiln=exe)
        os.replace(tmp, path)  # written last: marks the folder complete
        return lib
    return compile_graph_file(path, out_dir, name=name, options=opts, kiln=exe)


def compile(graph, *, name: str | None = None, options: Sequence[str] = (), out_dir=None,
            num_threads: int = 1, kiln: str | None = None) -> Function:
    """Compiles a graph with kiln and loads it (see library_for). `options` are extra
    `kiln compile` flags, e.g. ["--fast-math"] or ["--march", "x86-64-v3"]."""
    lib = library_for(graph, name=name, options=options, out_dir=out_dir, kiln=kiln)
    return load(lib, num_threads=num_threads)


__all__ = ["compile", "library_for"]
