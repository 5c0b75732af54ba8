"""Reading what someone else made, with bounds: one JSON reader and one file check for every
place where data from outside comes in (agent replies, web bodies, replay lines, MCP arguments,
league files, run folders, model headers).

- :func:`loads_json` parses JSON with a size limit, a nesting-depth limit and a number-length
  limit, checked *before* the parser runs: no ``RecursionError`` from ``[[[[...`` and no
  4,300-digit ``ValueError`` from Python's int conversion reaches a user; a problem is a
  :class:`DataError` (a ``ValueError``) with one line.
- :func:`check_regular_file` / :func:`read_bounded`: a file named by data is read only if it is a
  regular file (not ``/dev/zero``, a FIFO or a folder) under a size limit.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

#: the default limits of :func:`loads_json`
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_JSON_DEPTH = 64
MAX_NUMBER_CHARS = 100
#: the largest file a spec or a league may name (a model file; the shipped ones are < 5 MB)
MAX_MODEL_BYTES = 512 * 1024 * 1024
#: the largest league file, run-folder command or state file read
MAX_SMALL_FILE_BYTES = 64 * 1024 * 1024


class DataError(ValueError):
    """Data from outside that is refused (one line saying why)."""


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def _scan(text: str, max_depth: int, max_number: int) -> None:
    """The nesting depth and the longest number of ``text``, outside its strings (regular
    expressions over the text: linear, no recursion)."""
    if text.count("[") + text.count("{") > max_depth:  # else no nesting can be too deep
        depth = 0
        for match in _BRACKET.finditer(_STRING.sub('""', text)):
            depth += 1 if match.group() in "[{" else -1
            if depth > max_depth:
                raise DataError(f"JSON nested deeper than {max_depth} levels")
    if re.search("[-+0-9.eE]{" + str(max_number + 1) + ",}", _STRING.sub('""', text)):
        raise DataError(f"a JSON number longer than {max_number} characters")


def _no_constants(name: str) -> Any:
    raise DataError(f"JSON holds {name}, which is not a number")


def loads_json(
    data: str | bytes | bytearray,
    *,
    what: str = "JSON",
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    max_number: int = MAX_NUMBER_CHARS,
) -> Any:
    """``json.loads`` within limits; :class:`DataError` naming ``what`` for anything it refuses
    (too big, too deep, a number too long, ``NaN`` / ``Infinity``, not UTF-8, not JSON)."""
    if len(data) > max_bytes:
        raise DataError(f"{what}: more than {max_bytes} bytes")
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{what}: not UTF-8 text") from None
    else:
        text = data
    try:
        _scan(text, max_depth, max_number)
        # Python's own float() and int() on a number the scan bounded; no NaN or Infinity
        return json.loads(text, parse_constant=_no_constants)
    except DataError as error:
        raise DataError(f"{what}: {error}") from None
    except (ValueError, RecursionError) as error:
        message = getattr(error, "msg", None) or str(error)
        raise DataError(f"{what}: not JSON ({message[:120]})") from None


def check_regular_file(path: str | os.PathLike[str], what: str = "file", max_bytes: int = MAX_MODEL_BYTES, hint: str = "") -> int:
    """The size of ``path`` if it is a regular file of at most ``max_bytes``; otherwise
    ``FileNotFoundError`` (no such file) or :class:`DataError` (a device, a FIFO, a folder, too big)."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"no {what} {path}" + (f" ({hint})" if hint else "")) from None
    except OSError as error:
        raise DataError(f"{what} {path}: cannot be read ({error.strerror or error})") from None
    except ValueError:  # an embedded NUL byte
        raise DataError(f"{what} {str(path)[:80]!r}: not a file name") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataError(f"{what} {path}: not a regular file (a device, a pipe or a folder is not read)")
    if info.st_size > max_bytes:
        raise DataError(f"{what} {path}: {info.st_size} bytes, more than the {max_bytes} a {what} may have")
    return int(info.st_size)


def read_bounded(path: str | os.PathLike[str], what: str = "file", max_bytes: int = MAX_SMALL_FILE_BYTES) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes`` (checked before and while reading)."""
    check_regular_file(path, what, max_bytes)
    with open(path, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew after the check
        raise DataError(f"{what} {path}: more than {max_bytes} bytes")
    return data


def read_json_file(path: str | os.PathLike[str], what: str = "JSON file", max_bytes: int = MAX_SMALL_FILE_BYTES) -> Any:
    """A JSON file read with :func:`read_bounded` and :func:`loads_json`."""
    return loads_json(read_bounded(path, what, max_bytes), what=f"{what} {Path(path)}", max_bytes=max_bytes)
