"""A PEP 517/660 build backend for this one package, standard library only.

pip builds with setuptools by default and fetches it from an index when the
environment lacks it; offline labs have no index. This backend needs nothing
but Python, so `pip install ./client/python` works anywhere pip does. It
packs framelake/ as a pure-Python wheel and reads name, version, description
and requires-python from pyproject.toml's [project] table (keep those keys
single-line strings).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = "framelake"


def _project() -> dict:
    with open(os.path.join(_HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S).group(1)
    return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"\s*$', table, re.M))


def _metadata(p: dict) -> str:
    return (f"Metadata-Version: 2.1\nName: {p['name']}\nVersion: {p['version']}\n"
            f"Summary: {p.get('description', '')}\nRequires-Python: {p.get('requires-python', '>=3')}\n")


def _sources():
    """Yields (path in the archive, path on disk) of the package's files."""
    root = os.path.join(_HERE, _PACKAGE)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".typed")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, _HERE).replace(os.sep, "/"), path


def _wheel(directory: str, files: list) -> str:
    """Writes a py3-none-any wheel of files, (archive name, bytes) pairs, plus its dist-info."""
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    info = dist + ".dist-info/"
    files = files + [(info + "METADATA", _metadata(p).encode()),
                     (info + "WHEEL", b"Wheel-Version: 1.0\nGenerator: framelake _build_backend\n"
                                      b"Root-Is-Purelib: true\nTag: py3-none-any\n")]
    record = io.StringIO()
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write(f"{name},sha256={digest},{len(data)}\n")
    record.write(info + "RECORD,,\n")
    wheel = dist + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files + [(info + "RECORD", record.getvalue().encode())]:
            z.writestr(name, data)
    return wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    for name, path in _sources():
        with open(path, "rb") as f:
            files.append((name, f.read()))
    return _wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """`pip install -e`: a .pth file puts this folder on sys.path."""
    return _wheel(wheel_directory, [(_PACKAGE + ".pth", (_HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    with tarfile.open(os.path.join(sdist_directory, dist + ".tar.gz"), "w:gz") as tar:
        for name in ("pyproject.toml", "_build_backend.py"):
            tar.add(os.path.join(_HERE, name), arcname=f"{dist}/{name}")
        for name, path in _sources():
            tar.add(path, arcname=f"{dist}/{name}")
        info = tarfile.TarInfo(f"{dist}/PKG-INFO")
        data = _metadata(p).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return dist + ".tar.gz"
