"""Which files on the server an import may read: only those under the configured import folder.

A path typed into the Import page is untrusted. Reading the live SQLite store through an ordinary file
descriptor is not harmless: closing that descriptor drops every POSIX lock the process holds on the file,
so SQLite in this process and others can then delete the write-ahead log under a running server and the
saved labels with it. So a server path must resolve (symlinks followed) to a file under the import folder
(``SPANLIGHT_IMPORT_DIR``, default ``imports/`` under the data folder; ``off`` allows no server paths),
must not be one of the store's own files (checked by ``stat`` before anything is opened), must not be an
SQLite database under any name (checked by its header), and must not be larger than the import size cap
(``SPANLIGHT_MAX_IMPORT_MB``), which applies to uploads too; the command line only obeys a cap that
was set.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url

from db.config import data_dir, resolve_url, setting
from formats.storable import unstorable
from formats.tables import shards

SQLITE_HEADER = b"SQLite format 3\x00"
# A 32 MB file keeps a whole import (bytes, parsed records, the rows) well below 500 MB of memory.
DEFAULT_MAX_IMPORT_MB = 32
STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")


class ImportPathRefused(ValueError):
    """The path may not be read for an import; the message says why, for the user."""


def import_dir() -> Path | None:
    """The folder server-path imports are confined to, or None when server paths are switched off."""
    value = setting("IMPORT_DIR")
    if value is not None and value.strip().lower() == "off":
        return None
    return Path(value).expanduser() if value else data_dir() / "imports"


def max_import_bytes() -> int:
    """The largest file an import reads, from ``SPANLIGHT_MAX_IMPORT_MB`` (megabytes, default 32)."""
    value = setting("MAX_IMPORT_MB")
    try:
        megabytes = float(value) if value else DEFAULT_MAX_IMPORT_MB
    except ValueError:
        megabytes = DEFAULT_MAX_IMPORT_MB
    return int(max(megabytes, 0) * 1024 * 1024)


def size_problem(size: int, what: str = "the file is", *, set_only: bool = False) -> str | None:
    """Why a file of ``size`` bytes is too large to import, or None.

    ``set_only``: only a cap the operator set applies (the command line streams files of any size; the
    default cap guards the web server's memory, which holds a browser upload whole)."""
    if set_only and setting("MAX_IMPORT_MB") is None:
        return None
    cap = max_import_bytes()
    if size <= cap:
        return None
    return (
        f"{what} {size / 1024 / 1024:,.1f} MB, more than the import limit of {cap / 1024 / 1024:,.0f} MB "
        "(SPANLIGHT_MAX_IMPORT_MB); split it"
    )


def store_files(url: str | None = None) -> list[Path]:
    """The SQLite store's database file and its journal, WAL and shared-memory files (none for PostgreSQL)."""
    parsed = make_url(resolve_url(url))
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return []
    base = Path(parsed.database).expanduser()
    return [base.with_name(base.name + suffix) for suffix in STORE_SUFFIXES]


def is_store_file(path: Path, url: str | None = None) -> bool:
    """Whether ``path`` is (a link to) one of the store's files; decided by ``stat``, never by opening it."""
    try:
        target = path.stat()
    except OSError:
        return False
    for candidate in store_files(url):
        try:
            found = candidate.stat()
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (target.st_dev, target.st_ino):
            return True
    return False


def _inside_import_dir(typed: str, what: str) -> Path:
    folder = import_dir()
    if folder is None:
        raise ImportPathRefused(
            "Reading files on the server is switched off (SPANLIGHT_IMPORT_DIR=off): upload."
        )
    if unstorable(typed) is not None:  # no path holds one; resolving it raised "embedded null byte"
        raise ImportPathRefused(f"{typed!r} cannot name a {what}: it holds a NUL or broken Unicode.")
    root = folder.resolve()
    candidate = Path(typed.strip()).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()
    if not resolved.is_relative_to(root):
        raise ImportPathRefused(
            f"Only {what}s inside the import folder {root} can be read; {typed!r} is outside."
        )
    if is_store_file(resolved):
        raise ImportPathRefused(f"{typed!r} is the application's own database: refused.")
    return resolved


def import_file_path(typed: str, *, capped: bool = True) -> Path:
    """The file ``typed`` names, once it passed every check; raises ImportPathRefused saying why not.

    ``capped`` False leaves the size to the importer, which reads a large file from disk as it goes
    where its format can, and applies the cap to a file it must hold whole
    (:func:`~db.transfer.import_path`)."""
    path = _inside_import_dir(typed, "file")
    if not path.is_file():
        raise ImportPathRefused(f"There is no file at {typed!r} in the import folder.")
    problem = size_problem(path.stat().st_size) if capped else None
    if problem is not None:
        raise ImportPathRefused(f"{typed!r}: {problem}.")
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if header == SQLITE_HEADER:
        raise ImportPathRefused(f"{typed!r} is an SQLite database, not an import file: refused.")
    return path


def image_root_path(typed: str) -> Path:
    """The folder ``typed`` names as a dataset's image root, resolved (symlinks followed); raises
    ImportPathRefused saying why not.

    The one rule for every image root a web page sets, whether typed on the Import or the Item page or
    named inside an imported file: pages serve a dataset's images and an import probes them, so a root
    must lie where a page may read files, inside the import folder (a relative name is taken inside it,
    like a typed file's), or inside the data folder, where the demo's and uploaded ZIPs' images are
    kept. The folder need not exist yet: its missing images are reported like any others."""
    try:
        return _inside_import_dir(typed, "folder")
    except ImportPathRefused:
        if unstorable(typed) is not None:
            raise
        candidate = Path(typed.strip()).expanduser()
        data = data_dir().resolve()
        resolved = candidate.resolve()
        if candidate.is_absolute() and resolved.is_relative_to(data) and not is_store_file(resolved):
            return resolved
        folder = import_dir()
        if folder is None or is_store_file(resolved) or not candidate.is_absolute():
            raise
        # Outside both: the refusal names both places, where the Import page's names only its own.
        raise ImportPathRefused(
            f"An image folder must lie inside the import folder {folder.resolve()} or the data folder "
            f"{data}; {typed!r} is outside both."
        ) from None


def confined_image_root(root: str, *, written: str | None = None) -> tuple[str | None, str | None]:
    """An image folder a file names, for an import from the web page: kept (resolved) when
    :func:`image_root_path` allows it, else dropped with the reason; one named inside the file would
    otherwise have let the pages show images, and the import probe files, anywhere on the server.
    ``written``: the root as the file gave it, when ``root`` is where that was looked for."""
    try:
        return str(image_root_path(root)), None
    except ImportPathRefused:
        where = " or ".join(str(f) for f in (import_dir(), data_dir()) if f is not None)
        named = repr(root) if written in (None, root) else f"{written!r} (looked for at {root})"
        return None, (
            f"the file's image folder {named} is outside {where}; not used (choose an image folder on the "
            "Import page)"
        )


def file_image_root(root: str, folder: Path | None, *, confine: bool) -> tuple[str | None, str | None]:
    """The folder an image root named inside an imported file is looked for in (resolved), and why it
    is not used (None when it is).

    A relative root ("images/") is taken against the file's own ``folder``, where its writer put the
    images beside it: a file read from disk, on the command line or from the import folder. An upload
    (``folder`` None) has no folder of its own, so a page takes it inside the import folder, like a typed
    name; the command line, with no file of its own either, against its working folder. From a page
    (``confine``) the folder found must then pass :func:`image_root_path`, like every root a page sets.
    The result is absolute, so the pages never look for a stored root against the server's own working
    folder."""
    candidate = Path(root.strip()).expanduser()
    if not candidate.is_absolute():
        base = folder if folder is not None else import_dir() if confine else Path.cwd()
        if base is None:
            return None, (
                f"the file's image folder {root!r} is relative, and with server paths switched off "
                "(SPANLIGHT_IMPORT_DIR=off) there is no import folder to look for it in; not used (upload "
                "its images in a ZIP)"
            )
        candidate = (base / candidate).resolve()
    if not confine:
        return str(candidate.resolve()), None
    return confined_image_root(str(candidate), written=root)


def names_import_folder(typed: str) -> bool:
    """Whether ``typed`` names a folder (not a file) inside the import folder; never raises."""
    try:
        return _inside_import_dir(typed, "folder").is_dir()
    except (ImportPathRefused, OSError):
        return False


def dataset_folder_problem(folder: Path, root: Path | None = None) -> str | None:
    """Why a dataset folder (Parquet shards) may not be imported, or None: it has no shards, a shard is
    (a link to) the store or lies outside ``root``, or the shards together exceed the import size cap."""
    found = shards(folder)
    if not found:
        return "it holds no .parquet files"
    for path in found:
        if root is not None and not path.resolve().is_relative_to(root):
            return f"{path.relative_to(folder)} links outside the import folder"
        if is_store_file(path):
            return f"{path.relative_to(folder)} is the application's own database"
    return size_problem(sum(p.stat().st_size for p in found), "its Parquet files are")


def dataset_folder_path(typed: str) -> Path:
    """The dataset folder ``typed`` names, once it passed every check; raises ImportPathRefused."""
    path = _inside_import_dir(typed, "folder")
    if not path.is_dir():
        raise ImportPathRefused(f"There is no folder at {typed!r} in the import folder.")
    folder = import_dir()
    problem = dataset_folder_problem(path, folder.resolve() if folder else None)
    if problem is not None:
        raise ImportPathRefused(f"{typed!r}: {problem}.")
    return path


def read_import_file(typed: str) -> tuple[bytes, str]:
    """The bytes and file name of the import file ``typed`` names (see :func:`import_file_path`)."""
    path = import_file_path(typed)
    with path.open("rb") as handle:
        data = handle.read(max_import_bytes() + 1)
    problem = size_problem(len(data))  # the file may have grown since it was checked
    if problem is not None:
        raise ImportPathRefused(f"{typed!r}: {problem}.")
    if data.startswith(SQLITE_HEADER):
        raise ImportPathRefused(f"{typed!r} is an SQLite database, not an import file: refused.")
    return data, path.name


def read_import_bytes(typed: str) -> bytes:
    """The bytes of the import file ``typed`` names (see :func:`read_import_file`)."""
    return read_import_file(typed)[0]


def read_import_head(typed: str, size: int) -> tuple[bytes, int, Path]:
    """The first ``size`` bytes, the whole size and the path of the import file ``typed`` names (of any
    size: the cap is the importer's, see :func:`import_file_path`)."""
    path = import_file_path(typed, capped=False)
    with path.open("rb") as handle:
        head = handle.read(size)
    return head, path.stat().st_size, path


def image_folder_path(typed: str) -> Path:
    """The existing image folder ``typed`` names on the Import page, once :func:`image_root_path` allows
    it; raises ImportPathRefused. With server paths switched off nothing typed is read, as the setting
    says (upload only), though a root in the data folder that an upload's images were put in is still
    taken from the import itself."""
    if import_dir() is None:
        _inside_import_dir(typed, "folder")  # raises: reading the server's files is switched off
    path = image_root_path(typed)
    if not path.is_dir():
        raise ImportPathRefused(f"There is no folder at {typed!r} in the import folder.")
    return path


__all__ = [
    "ImportPathRefused",
    "confined_image_root",
    "dataset_folder_path",
    "dataset_folder_problem",
    "file_image_root",
    "image_folder_path",
    "image_root_path",
    "import_dir",
    "import_file_path",
    "is_store_file",
    "max_import_bytes",
    "names_import_folder",
    "read_import_bytes",
    "read_import_file",
    "read_import_head",
    "size_problem",
    "store_files",
]
