"""Where a command may write: never over one of its own inputs, never over an existing file unless
told to (`--force`).

`report self.md -o self.md` used to replace the log with its own report and exit 0. An output is
compared with every input of the same command by device and inode (after following links, so a hard
link, a symbolic link or `./x/../self.md` is the same file) and refused, naming both, even with
`--force`. An output that exists and is not an input is refused without `--force`: a report, a plot,
a trend file, and each frame file a `--frames-out` folder would receive. A folder that already exists
is fine; only the files written into it count.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from logscope.errors import OutputError

PathLike = str | os.PathLike[str]


def check_outputs(
    files: Iterable[PathLike],
    inputs: Iterable[PathLike | None],
    *,
    folders: Iterable[PathLike] = (),
    force: bool = False,
) -> None:
    """Raise `OutputError` if a file of `files` (or a folder of `folders`) is one of `inputs` (None
    entries, options not given, are ignored), or if a file of `files` exists and `force` is not set."""
    from logscope.io import display_path  # (here: the reader imports numpy, which `--help` need not)

    known: dict[tuple[int, int], str] = {}
    for path in inputs:
        if path is None:
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue  # an input that is not there is reported by whatever reads it
        known.setdefault((st.st_dev, st.st_ino), os.fspath(path))
    for path, is_folder in [*((f, False) for f in files), *((f, True) for f in folders)]:
        try:
            st = os.stat(path)
        except OSError:
            continue  # not there yet (or not reachable: writing it reports why)
        same = known.get((st.st_dev, st.st_ino))
        if same is not None:
            raise OutputError(
                f"{display_path(path)}: is the input {display_path(same)} of this command; refusing to "
                "write over it (choose another output)"
            )
        if not is_folder and not force:
            raise OutputError(f"{display_path(path)}: exists; refusing to overwrite it without --force")


def frame_folders(sources: Sequence[str], folder: Path) -> list[Path]:
    """The `--frames-out` folder of each log: `folder` itself for one log, `folder/<file name>` for
    several, and `folder/<n>-<file name>` (n from 1, in argument order) for all of them when two logs
    share a file name (`a/x.log b/x.log`), so no log's frames replace another's."""
    if len(sources) == 1:
        return [folder]
    names = [Path(source).name for source in sources]
    if len(set(names)) == len(names):
        return [folder / name for name in names]
    return [folder / f"{number}-{name}" for number, name in enumerate(names, 1)]


def frame_file(folder: Path, name: str, fmt: str) -> Path:
    """Where `write_frames` and `write_reference_frames` write the frame `name`."""
    return folder / f"{name}.{fmt}"


def frame_files(folder: Path, names: Iterable[str], fmt: str) -> list[Path]:
    return [frame_file(folder, name, fmt) for name in names]
