"""JSON members of a zip archive, Zstandard-compressed members included.

Inspect AI (0.3.2xx and later) writes the members of an ``.eval`` log with Zstandard
compression (zip method 93), which Python's :mod:`zipfile` reads only from 3.14 on. On older
Pythons the member's compressed bytes are located through its local file header and
decompressed with the ``zstandard`` package (a dependency of bayes_tee below 3.14); the CRC-32
in the archive's directory is checked either way.

>>> with ZipJson("log.eval") as z:                      # doctest: +SKIP
...     header = z.read("header.json")
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from .._core.exceptions import DesignError

try:  # Python 3.14+: the standard library's decoder
    from compression import zstd as _zstd_std  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the Python version
    _zstd_std = None
try:
    import zstandard as _zstandard
except ImportError:  # pragma: no cover - a dependency below Python 3.14
    _zstandard = None

#: The zip compression method number of Zstandard (APPNOTE 4.4.5).
ZSTD_METHOD = 93
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def _zstd_decompress(raw: bytes, size: int, where: str) -> bytes:
    if _zstd_std is None and _zstandard is None:
        raise DesignError(
            f"{where} is Zstandard-compressed; install the 'zstandard' package (pip install "
            "zstandard) or use Python 3.14+, whose standard library reads it."
        )
    try:
        if _zstd_std is not None:
            return _zstd_std.decompress(raw)
        return _zstandard.ZstdDecompressor().decompress(raw, max_output_size=max(size, 1))
    except Exception as err:  # each decoder raises its own error type on corrupt data
        raise DesignError(f"{where}: damaged archive member ({err}).") from None


class ZipJson:
    """Read JSON members of a zip archive (a context manager).

    Parameters
    ----------
    path : str or Path
        The archive.
    expected : str
        What the file should be, for the error message.

    Raises
    ------
    DesignError
        When the file is not a zip archive, naming it.

    Examples
    --------
    >>> with ZipJson("log.eval") as z:                  # doctest: +SKIP
    ...     sorted(z.names())[:2]
    ['header.json', 'reductions.json']
    """

    def __init__(self, path: str | Path, expected: str = "a zip archive"):
        self.path = Path(path)
        try:
            self._zip = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, OSError) as err:
            raise DesignError(f"{self.path}: not a zip archive ({err}); expected {expected}.") from None

    def __enter__(self) -> ZipJson:
        return self

    def __exit__(self, *exc: object) -> None:
        self._zip.close()

    def names(self) -> list[str]:
        """The member names."""
        return self._zip.namelist()

    def read_bytes(self, name: str) -> bytes:
        """One member's decompressed bytes (CRC-checked)."""
        info = self._zip.getinfo(name)
        where = f"{self.path}:{name}"
        if info.compress_type != ZSTD_METHOD or _zstd_std is not None:
            try:
                return self._zip.read(name)
            except NotImplementedError:  # a Python whose zipfile lacks the method
                pass
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            fields = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
            if fields[0] != b"PK\x03\x04":
                raise DesignError(f"{where}: damaged archive (no local file header).")
            fh.seek(info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1])
            raw = fh.read(info.compress_size)
        data = _zstd_decompress(raw, info.file_size, where)
        if zlib.crc32(data) != info.CRC:
            raise DesignError(f"{where}: damaged archive member (CRC mismatch).")
        return data

    def read(self, name: str) -> Any:
        """One member parsed as JSON (``NaN`` allowed, as Inspect writes it)."""
        try:
            return json.loads(self.read_bytes(name))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise DesignError(f"{self.path}:{name} is not valid JSON ({err}).") from None
